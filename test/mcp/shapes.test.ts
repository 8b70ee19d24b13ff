// How MCP tools look from Python (signatures, docs, argument mapping) and how client roots
// narrow a server's: pure functions, checked on the forms real schemas and calls take.
import assert from 'node:assert/strict'
import { mkdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { McpConfigSchema } from '../../src/engine/mcp-config.js'
import { narrowRoots, rootPaths } from '../../src/mcp/server/client-roots.js'
import { pythonToolName } from '../../src/mcp-client/bind.js'
import { namedArguments, toolShape } from '../../src/mcp-client/signature.js'
import { tempDir } from './helpers.js'

const search = toolShape('Search the web.', {
  type: 'object',
  properties: {
    limit: { type: 'integer', default: 10, description: 'how many' },
    query: { type: 'string', description: 'what to look for' },
    from: { type: 'string' },
    'max-age': { type: ['integer', 'null'] },
    filter: { type: 'object' },
  },
  required: ['query'],
})

test('signatures: required first, defaults as Python literals, unspellable names through **kwargs', () => {
  assert.equal(search.signature, '(query, limit=10, filter=None, **kwargs)')
  assert.equal(
    search.doc,
    [
      'Search the web.',
      '',
      'Parameters:',
      '  query (string): what to look for',
      '  limit (integer, optional): how many',
      '  from (string, optional)',
      '  max-age (integer | null, optional)',
      '  filter (object, optional)',
    ].join('\n'),
  )
  assert.equal(toolShape(undefined, undefined).signature, '()')
  assert.equal(toolShape('', { type: 'object' }).doc, '(no description)')
  assert.equal(pythonToolName('gh', 'list-issues.v2'), 'mcp_gh_list_issues_v2')
})

test('arguments: positional and keyword map to names; an object value stays positional', () => {
  assert.deepEqual(namedArguments('s', search, ['cats']), { ok: true, value: { query: 'cats' } })
  assert.deepEqual(namedArguments('s', search, ['cats', 3, { from: 'x', 'max-age': 2 }]), {
    ok: true,
    value: { query: 'cats', limit: 3, from: 'x', 'max-age': 2 },
  })
  // {"lang": "en"} has a key that names no parameter: it is the filter itself.
  assert.deepEqual(namedArguments('s', search, ['cats', 3, { lang: 'en' }]), {
    ok: true,
    value: { query: 'cats', limit: 3, filter: { lang: 'en' } },
  })
  assert.deepEqual(namedArguments('s', search, [{ query: 'q' }]), { ok: true, value: { query: 'q' } })
  const missing = namedArguments('mcp_w_search', search, [{ limit: 1 }])
  assert.deepEqual(missing, {
    ok: false,
    message: "mcp_w_search(query, limit=10, filter=None, **kwargs) is missing 'query'",
  })
  const twice = namedArguments('s', search, ['a', { query: 'b' }])
  assert.equal(twice.ok, false)
  assert.match((twice as { message: string }).message, /got 'query' twice/)
  const many = namedArguments('s', search, [1, 2, 3, 4])
  assert.match((many as { message: string }).message, /takes at most 3 positional arguments, got 4/)
})

test("client roots narrow the server's: inside kept, enclosing gives the server's, disjoint and escaping links dropped", () => {
  const server = tempDir('narrow-server')
  const other = tempDir('narrow-other')
  const sub = join(server, 'sub')
  mkdirSync(sub)
  symlinkSync(other, join(server, 'escape'))
  assert.deepEqual(narrowRoots([server], [sub]), [sub])
  assert.deepEqual(narrowRoots([server], ['/']), [server])
  assert.deepEqual(narrowRoots([server], [other]), [])
  assert.deepEqual(narrowRoots([server], [join(server, 'escape')]), [])
  assert.deepEqual(narrowRoots([server], [join(server, 'missing')]), [])
  assert.deepEqual(narrowRoots([server], [sub, server]), [sub, server])
  assert.deepEqual(rootPaths([{ uri: 'file:///a/b%20c' }, { uri: 'https://example.com/' }]), ['/a/b c'])
})

test('mcp.json as other hosts write it: "mcpServers", names with "-" or ".", a "type" field; SSE and clashes refused', () => {
  const claude = McpConfigSchema.parse({
    mcpServers: {
      'brave-search': { type: 'stdio', command: 'npx', args: ['-y', 'x'] },
      'docs.site': { type: 'http', url: 'https://mcp.example.com/mcp' },
      remote: { type: 'streamable-http', url: 'https://r.example.com/mcp' },
    },
  })
  assert.deepEqual(Object.keys(claude.servers), ['brave-search', 'docs.site', 'remote'])
  assert.equal(claude.servers['brave-search']!.timeout_ms, 60_000)
  assert.deepEqual(claude.serve, { roots: [], network: McpConfigSchema.parse({}).serve.network })
  assert.equal(pythonToolName('brave-search', 'web-search'), 'mcp_brave_search_web_search')
  assert.equal(pythonToolName('docs.site', 'find'), 'mcp_docs_site_find')
  assert.deepEqual(McpConfigSchema.parse({}).servers, {})
  const refused = (raw: unknown) => {
    const r = McpConfigSchema.safeParse(raw)
    assert.equal(r.success, false, JSON.stringify(raw))
    return r.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')
  }
  assert.match(
    refused({ mcpServers: { old: { type: 'sse', url: 'https://o.example.com/sse' } } }),
    /mcpServers\.old\.type: the SSE transport is not supported/,
  )
  assert.match(
    refused({ servers: { 'a-b': { command: 'x' }, a_b: { command: 'y' } } }),
    /servers\.a_b: servers "a-b" and "a_b" would both be mcp_a_b_\.\.\.; rename one/,
  )
  assert.match(
    refused({ servers: { a: { command: 'x' } }, mcpServers: { b: { command: 'y' } } }),
    /give the servers as "servers" or as "mcpServers", not both/,
  )
  assert.match(refused({ servers: { '1st': { command: 'x' } } }), /servers\.1st: a server name is a letter/)
  // Sixteenth outsider pass: an env key is a portable variable name. `PERL5LIB=/w/lib:` would give the
  // server PERL5LIB=/w/lib:=<value>; `BASH_FUNC_x%%` is a function bash imports.
  for (const key of ['PERL5LIB=/w/lib:', 'BASH_FUNC_node%%', '1ST', 'A-B', ''])
    assert.match(
      refused({ servers: { s: { command: 'x', env: { [key]: 'v' } } } }),
      /servers\.s\.env\..*: an env name is letters, digits and "_", not starting with a digit/,
      key,
    )
  assert.deepEqual(
    Object.keys(
      (
        McpConfigSchema.parse({ servers: { s: { command: 'x', env: { _A1: '1', lower_case: '2' } } } })
          .servers.s as { env: Record<string, string> }
      ).env,
    ),
    ['_A1', 'lower_case'],
  )
})

test('parameters named like Object.prototype keys are bound and checked as their own', () => {
  const shape = toolShape('t', {
    type: 'object',
    properties: { toString: { type: 'string' }, constructor: { type: 'string' } },
    required: ['toString', 'constructor'],
  })
  const missing = namedArguments('t', shape, [])
  assert.equal(missing.ok, false, 'a required toString is not given by the prototype')
  const given = namedArguments('t', shape, ['a', 'b'])
  assert.ok(given.ok, given.ok ? '' : given.message)
  assert.equal(JSON.stringify(given.value), '{"toString":"a","constructor":"b"}')
  assert.equal(Object.getPrototypeOf(given.value), Object.prototype)
})
