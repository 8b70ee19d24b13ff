// `vis mcp --read-only` (issue 32 §3): the sessions it serves and the file tools a client calls
// directly both read the roots and change nothing. The CLI is a real child process, driven by
// the official SDK's client; a server without the flag (the control) writes.
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { childEnv, cliScript, repoRoot, run, tempDir, textOf } from './helpers.js'

const clients: Client[] = []
after(async () => {
  await Promise.allSettled(clients.map((c) => c.close()))
})

async function connect(root: string, flags: string[]): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', cliScript, 'mcp', '--root', root, '--pool', '0', ...flags],
    env: childEnv({ VIS_HOME: tempDir('ro-home') }),
    cwd: repoRoot,
    stderr: 'pipe',
  })
  const client = new Client({ name: 'vis-test', version: '1.0.0' })
  await client.connect(transport, { timeout: 60_000 })
  clients.push(client)
  return client
}

const WRITE = `try:
    open('notes.txt', 'w').write('changed\\n')
    print('wrote')
except PermissionError as e:
    print('refused:', e)`

const patchCall = (c: Client) =>
  c.callTool(
    { name: 'patch', arguments: { edits: [{ path: 'notes.txt', search: 'original', replace: 'patched' }] } },
    undefined,
    { timeout: 60_000 },
  ) as Promise<CallToolResult>

test('vis mcp --read-only: python_execution and the patch tool cannot change the root', async () => {
  const root = tempDir('ro-root')
  writeFileSync(join(root, 'notes.txt'), 'original\n')
  const c = await connect(root, ['--read-only'])
  assert.match(textOf(await run(c, WRITE)), /refused: vis: writing 'notes\.txt' .*the session is read-only/)
  const p = await patchCall(c)
  assert.equal(p.isError, true)
  assert.match(textOf(p), /^patch: 'notes.txt' was not changed: the session is read-only/)
  assert.equal(readFileSync(join(root, 'notes.txt'), 'utf8'), 'original\n')
  // Reading still works.
  assert.match(textOf(await run(c, "print(open('notes.txt').read())")), /original/)
})

test('vis mcp without --read-only writes (the control)', async () => {
  const root = tempDir('rw-root')
  writeFileSync(join(root, 'notes.txt'), 'original\n')
  const c = await connect(root, [])
  const p = await patchCall(c)
  assert.notEqual(p.isError, true, textOf(p))
  assert.equal(readFileSync(join(root, 'notes.txt'), 'utf8'), 'patched\n')
  assert.match(textOf(await run(c, WRITE)), /wrote/)
})
