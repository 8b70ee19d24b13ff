// ATTACK (README, CLI table: "`vis mcp --read-only` | the served sessions and the file tools read
// the roots and change nothing (mode read-only; `"serve": {"mode": "read-only"}` in mcp.json)";
// SECURITY.md "Session modes": read-only is a security claim). A person who makes their MCP
// server read-only in ~/.vis/mcp.json, and whose MCP host starts it the way the README's MCP
// section shows (`"args": ["mcp", "--root", "/path/to/project"]`), gets a WRITABLE server:
// src/cli/commands/mcp.ts `policyFrom` drops the whole `serve` section of mcp.json as soon as
// any of --root/--network/--allow is given, mode included, and says nothing. The flags only
// name the roots and the network; nothing asked for mode workspace. The client's `patch` and its
// blocks then change the project the person declared read-only.
//
// Reproduction: VIS_HOME/mcp.json = {"serve": {"mode": "read-only"}}; `vis mcp --root R`; the
// client calls patch on R/notes.txt and runs open('made.txt','w') in a block: both land.
// Expected: the configured mode holds (tool.session-read-only / PermissionError), or the server
// refuses to start saying the flags would drop it.
import assert from 'node:assert/strict'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
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

test("mcp.json's serve.mode read-only holds when the MCP host passes --root", async () => {
  const home = tempDir('ro-config-home')
  writeFileSync(join(home, 'mcp.json'), JSON.stringify({ serve: { mode: 'read-only' } }))
  const root = tempDir('ro-config-root')
  writeFileSync(join(root, 'notes.txt'), 'original\n')
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', cliScript, 'mcp', '--root', root, '--pool', '0'],
    env: childEnv({ VIS_HOME: home }),
    cwd: repoRoot,
    stderr: 'pipe',
  })
  const c = new Client({ name: 'vis-attack', version: '1.0.0' })
  let started = true
  try {
    await c.connect(transport, { timeout: 60_000 })
    clients.push(c)
  } catch {
    started = false // refusing to start with the mode dropped is an acceptable answer
  }
  if (!started) return
  const patched = (await c.callTool(
    { name: 'patch', arguments: { edits: [{ path: 'notes.txt', search: 'original', replace: 'PATCHED' }] } },
    undefined,
    { timeout: 60_000 },
  )) as CallToolResult
  const block = textOf(await run(c, "open('made.txt', 'w').write('x'); print('wrote')"))
  const problems: string[] = []
  if (readFileSync(join(root, 'notes.txt'), 'utf8') !== 'original\n')
    problems.push(`patch changed notes.txt in a read-only server: ${textOf(patched).slice(0, 200)}`)
  if (existsSync(join(root, 'made.txt'))) problems.push(`a block wrote made.txt: ${block.slice(0, 200)}`)
  assert.deepEqual(problems, [])
})

test('control: the same mcp.json with serve.roots (no --root) is read-only', async () => {
  const home = tempDir('ro-config-home2')
  const root = tempDir('ro-config-root2')
  writeFileSync(join(home, 'mcp.json'), JSON.stringify({ serve: { roots: [root], mode: 'read-only' } }))
  writeFileSync(join(root, 'notes.txt'), 'original\n')
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', cliScript, 'mcp', '--pool', '0'],
    env: childEnv({ VIS_HOME: home }),
    cwd: repoRoot,
    stderr: 'pipe',
  })
  const c = new Client({ name: 'vis-attack', version: '1.0.0' })
  await c.connect(transport, { timeout: 60_000 })
  clients.push(c)
  const patched = (await c.callTool(
    { name: 'patch', arguments: { edits: [{ path: 'notes.txt', search: 'original', replace: 'PATCHED' }] } },
    undefined,
    { timeout: 60_000 },
  )) as CallToolResult
  assert.equal(readFileSync(join(root, 'notes.txt'), 'utf8'), 'original\n')
  assert.match(textOf(patched), /read-only/)
})
