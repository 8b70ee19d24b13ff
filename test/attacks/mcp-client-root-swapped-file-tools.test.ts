// ATTACK (SECURITY.md "Roots": "MCP clients are bounded by mcp.json's serve.roots ... so a client
// that narrowed to A/sub never gets what another client with A swapped A/sub for"; "An MCP
// server's roots are pinned at its start"). The server's roots are pinned, and a client's
// SESSION root inside a server root is pinned when the session is created. But the file tools
// `vis mcp` serves to the client directly (cat, ls, grep, patch) run with the client's narrowed
// roots, and the PathGuard they use carries only the SERVER roots' pins: a client root such as
// A/sub has no pin, so each call resolves it afresh, following a symlink (PathGuard.pinnedReal
// opens it O_PATH without O_NOFOLLOW and takes readlink of the fd as the real root). The
// client's roots are narrowed once (ClientPolicy caches them), before the swap.
//
// Reproduction: `vis mcp --root P`; the MCP client offers roots [P/sub] and lists its tools.
// Another sandbox whose root is P (a `vis serve`/`vis run` session on the same project, or a
// second client of the same server; here the test does its rename) renames P/sub away and
// symlinks P/sub -> a host directory outside P. The client's `cat P/sub/secret.txt` then
// returns the host file, `ls` lists the host directory and `patch` rewrites a host file:
// reads and writes outside every root the operator gave the server.
// Expected: policy.root-changed (or a path-denied refusal), nothing read or written.
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { childEnv, cliScript, repoRoot, tempDir, textOf } from '../mcp/helpers.js'
import { clientOptions, withRoots } from '../mcp/roots.js'

const clients: Client[] = []
after(async () => {
  await Promise.allSettled(clients.map((c) => c.close()))
})

test('a client root inside the server root, swapped for a symlink, is not followed by the MCP file tools', async () => {
  const parent = tempDir('client-swap-parent')
  const sub = join(parent, 'sub')
  mkdirSync(sub)
  writeFileSync(join(sub, 'notes.txt'), 'original\n')
  // A host directory outside every root the server was given.
  const hostDir = tempDir('client-swap-host')
  writeFileSync(join(hostDir, 'secret.txt'), 'HOST-SECRET-5a9c\n')
  writeFileSync(join(hostDir, 'notes.txt'), 'host notes\n')

  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', cliScript, 'mcp', '--root', parent, '--pool', '0'],
    env: childEnv({ VIS_HOME: tempDir('client-swap-home') }),
    cwd: repoRoot,
    stderr: 'pipe',
  })
  const opts = { roots: () => [sub] }
  const c = withRoots(new Client({ name: 'vis-attack', version: '1.0.0' }, clientOptions(opts)), opts)
  await c.connect(transport, { timeout: 60_000 })
  clients.push(c)

  // The client narrows to P/sub; the file tools work there.
  await c.listTools(undefined, { timeout: 60_000 })
  const before = (await c.callTool({ name: 'cat', arguments: { path: join(sub, 'notes.txt') } }, undefined, {
    timeout: 60_000,
  })) as CallToolResult
  assert.match(textOf(before), /original/, textOf(before))

  // Another sandbox over P swaps P/sub for a link to the host directory.
  renameSync(sub, join(parent, 'sub-away'))
  symlinkSync(hostDir, sub)

  const cat = (await c.callTool({ name: 'cat', arguments: { path: join(sub, 'secret.txt') } }, undefined, {
    timeout: 60_000,
  })) as CallToolResult
  const ls = (await c.callTool({ name: 'ls', arguments: { path: sub } }, undefined, {
    timeout: 60_000,
  })) as CallToolResult
  const patched = (await c.callTool(
    {
      name: 'patch',
      arguments: { edits: [{ path: join(sub, 'notes.txt'), search: 'host', replace: 'PATCHED' }] },
    },
    undefined,
    { timeout: 60_000 },
  )) as CallToolResult

  // grep walks the roots in a jail of its own: mounted only if each root is what was pinned.
  const grep = (await c.callTool({ name: 'grep', arguments: { query: 'HOST-SECRET' } }, undefined, {
    timeout: 60_000,
  })) as CallToolResult

  const problems: string[] = []
  if (textOf(grep).includes('HOST-SECRET-5a9c'))
    problems.push(`grep searched the host directory: ${textOf(grep).slice(0, 200)}`)
  if (textOf(cat).includes('HOST-SECRET'))
    problems.push(`cat read a host file outside the server's roots: ${textOf(cat).slice(0, 200)}`)
  if (textOf(ls).includes('secret.txt'))
    problems.push(`ls listed the host directory: ${textOf(ls).slice(0, 200)}`)
  const notes = readFileSync(join(hostDir, 'notes.txt'), 'utf8')
  if (notes !== 'host notes\n') problems.push(`patch wrote a host file outside the server's roots: ${notes}`)
  assert.deepEqual(problems, [], `patch said: ${textOf(patched).slice(0, 200)}`)
})
