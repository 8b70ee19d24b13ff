// ATTACK (SECURITY.md "Roots": a vis home inside a root is masked, and "the host file tools
// refuse it (tool.path-denied)"): the file tools an MCP client calls DIRECTLY (`cat`, `ls`,
// `grep`, `patch` on `vis mcp`, and `/mcp` on `vis serve`) are built with a PathGuard whose
// hidden list is only the extension directories (src/mcp/server/tools.ts `fileTools`:
// `extensions.maskFor(roots)`), not the vis homes inside the roots (`homeMasksFor`, which the
// session workers' tools get in engine/worker-start.ts). So with a root that contains the vis
// home (a workspace at $HOME, which SECURITY.md allows), an MCP client reads the home's files
// (`mcp.json` with its servers' tokens, the database with every session's transcript) and
// `patch` REWRITES them on the host: adding a server to `mcp.json` is a command line the next
// `vis mcp`/`vis serve`/`vis chat` on that home runs unconfined (a host code execution planted
// by the MCP client). Under `--read-only` patch is refused by the mode, but cat/ls/grep still
// read the home.
//
// Reproduction: VIS_HOME=<root>/.vis-home, `vis mcp --root <root>`; the client calls
// cat('.vis-home/mcp.json') (shows the token) and patch on it (adds a server). Both should be
// refused with tool.path-denied, as a session's own cat/patch are.
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { childEnv, cliScript, repoRoot, run, tempDir, textOf } from '../mcp/helpers.js'

const clients: Client[] = []
after(async () => {
  await Promise.allSettled(clients.map((c) => c.close()))
})

const SECRET = 'sk-mcp-server-token-4711'
const MCP_JSON = JSON.stringify(
  { servers: { search: { url: 'https://mcp.example.invalid/mcp', token: SECRET } } },
  null,
  1,
)

test('an MCP client cannot read or rewrite the vis home inside its root through the direct file tools', async () => {
  const root = tempDir('home-in-root')
  writeFileSync(join(root, 'notes.txt'), 'original\n')
  const home = join(root, '.vis-home')
  mkdirSync(home)
  writeFileSync(join(home, 'mcp.json'), MCP_JSON)
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', cliScript, 'mcp', '--root', root, '--pool', '0'],
    env: childEnv({ VIS_HOME: home }),
    cwd: repoRoot,
    stderr: 'pipe',
  })
  const c = new Client({ name: 'vis-attack', version: '1.0.0' })
  await c.connect(transport, { timeout: 60_000 })
  clients.push(c)

  // The session's own view (the control): the block sees the home masked.
  const inBlock = textOf(
    await run(
      c,
      `import os
try:
    print('BLOCK', open('.vis-home/mcp.json').read())
except OSError as e:
    print('BLOCK refused', type(e).__name__, sorted(os.listdir('.vis-home')))`,
    ),
  )
  assert.doesNotMatch(inBlock, new RegExp(SECRET), 'the jail shows the home')

  // The direct file tools: cat of the home's mcp.json.
  const cat = (await c.callTool({ name: 'cat', arguments: { path: '.vis-home/mcp.json' } }, undefined, {
    timeout: 60_000,
  })) as CallToolResult
  const catText = textOf(cat)
  // patch: plant a server the next vis process on this home starts on the host, unconfined.
  const patched = (await c.callTool(
    {
      name: 'patch',
      arguments: {
        edits: [
          {
            path: '.vis-home/mcp.json',
            search: '"servers": {',
            replace:
              '"servers": {\n  "planted": {"command": "sh", "args": ["-c", "id > /tmp/vis-planted-by-mcp-client"]},',
          },
        ],
      },
    },
    undefined,
    { timeout: 60_000 },
  )) as CallToolResult
  const after = readFileSync(join(home, 'mcp.json'), 'utf8')
  const problems: string[] = []
  if (catText.includes(SECRET))
    problems.push(`cat read the vis home's mcp.json (its server token): ${catText.slice(0, 300)}`)
  if (after.includes('planted')) problems.push(`patch rewrote the vis home's mcp.json on the host:\n${after}`)
  assert.deepEqual(problems, [])
  assert.equal(cat.isError, true)
  assert.equal(patched.isError, true)
  // tool.path-denied's message (MCP tool results carry the message, not the code).
  assert.match(catText, /a vis home, which sessions cannot reach/)
  assert.match(textOf(patched), /a vis home, which sessions cannot reach/)
  // The rest of the root stays served.
  const notes = textOf(
    (await c.callTool({ name: 'cat', arguments: { path: 'notes.txt' } }, undefined, {
      timeout: 60_000,
    })) as CallToolResult,
  )
  assert.match(notes, /original/)
})
