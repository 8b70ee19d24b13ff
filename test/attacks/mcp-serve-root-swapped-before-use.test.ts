// ATTACK (SECURITY.md "Roots", pinned to its creation; issue 30 §3/§5): a root's parent may be
// another sandbox's to write, which can rename the root away and leave a symlink to any host
// directory in its place. Sessions pin their roots when they are created, and SECURITY.md says
// MCP clients are bounded by serve.roots "checked the same way at every jail". But a
// `vis mcp --root R` (or `vis serve`'s /mcp with mcp.json serve.roots) pins nothing when it
// starts: R is only a path until the first client call creates a session (lazily), and the
// direct file tools resolve R afresh on their first call. So if R is swapped for a symlink
// between the server's start and its first use (for a long-running `vis serve`, days), the
// MCP client's `cat` reads the link's target, `patch` writes there on the host, and the
// session created then pins and binds the TARGET read-write into its jail. The operator named
// the directory R was when the server started; it should be refused (policy.root-changed).
//
// Reproduction: `vis mcp --root P/proj`; a sandbox whose root is P (here: the test) renames
// P/proj away and symlinks P/proj -> a host directory holding secret.txt; the MCP client then
// calls cat('secret.txt'), patch on notes.txt, and a block reading secret.txt.
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs'
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

test("a vis mcp server's root swapped for a symlink before its first use is refused, not followed", async () => {
  const parent = tempDir('swap-parent')
  const root = join(parent, 'proj')
  mkdirSync(root)
  writeFileSync(join(root, 'notes.txt'), 'original\n')
  // A host directory no client was given.
  const hostDir = tempDir('host-dir')
  writeFileSync(join(hostDir, 'secret.txt'), 'HOST-SECRET-7d1f\n')
  writeFileSync(join(hostDir, 'notes.txt'), 'host notes\n')
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', cliScript, 'mcp', '--root', root, '--pool', '0'],
    env: childEnv({ VIS_HOME: tempDir('swap-home') }),
    cwd: repoRoot,
    stderr: 'pipe',
  })
  const c = new Client({ name: 'vis-attack', version: '1.0.0' })
  await c.connect(transport, { timeout: 60_000 })
  clients.push(c)

  // The server runs; another sandbox (its root is the parent) swaps the root for a link.
  renameSync(root, join(parent, 'proj-away'))
  symlinkSync(hostDir, root)

  const cat = (await c.callTool({ name: 'cat', arguments: { path: 'secret.txt' } }, undefined, {
    timeout: 60_000,
  })) as CallToolResult
  const patched = (await c.callTool(
    { name: 'patch', arguments: { edits: [{ path: 'notes.txt', search: 'host', replace: 'PATCHED' }] } },
    undefined,
    { timeout: 60_000 },
  )) as CallToolResult
  const block = textOf(await run(c, "print(open('secret.txt').read())"))

  const problems: string[] = []
  if (textOf(cat).includes('HOST-SECRET'))
    problems.push(`cat read the link's target: ${textOf(cat).slice(0, 200)}`)
  if (readFileSync(join(hostDir, 'notes.txt'), 'utf8') !== 'host notes\n')
    problems.push(`patch wrote the link's target: ${readFileSync(join(hostDir, 'notes.txt'), 'utf8')}`)
  if (block.includes('HOST-SECRET'))
    problems.push(`the session's jail bound the link's target: ${block.slice(0, 200)}`)
  assert.deepEqual(problems, [], `${textOf(patched).slice(0, 200)}`)
  // Each is refused for the right reason: the root is not the directory the server pinned.
  for (const [what, text] of [
    ['cat', textOf(cat)],
    ['patch', textOf(patched)],
    ['block', block],
  ] as const)
    assert.match(text, /policy\.root-changed|no longer the directory/, `${what}: ${text.slice(0, 300)}`)
})

test('an unswapped root still works for the file tools and the session', async () => {
  const root = tempDir('pinned-root')
  writeFileSync(join(root, 'notes.txt'), 'original\n')
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', cliScript, 'mcp', '--root', root, '--pool', '0'],
    env: childEnv({ VIS_HOME: tempDir('pinned-home') }),
    cwd: repoRoot,
    stderr: 'pipe',
  })
  const c = new Client({ name: 'vis-attack', version: '1.0.0' })
  await c.connect(transport, { timeout: 60_000 })
  clients.push(c)
  const cat = (await c.callTool({ name: 'cat', arguments: { path: 'notes.txt' } }, undefined, {
    timeout: 60_000,
  })) as CallToolResult
  assert.match(textOf(cat), /original/)
  await c.callTool(
    { name: 'patch', arguments: { edits: [{ path: 'notes.txt', search: 'original', replace: 'patched' }] } },
    undefined,
    { timeout: 60_000 },
  )
  assert.equal(readFileSync(join(root, 'notes.txt'), 'utf8'), 'patched\n')
  assert.match(textOf(await run(c, "print(open('notes.txt').read())")), /patched/)
})
