// A live session's root renamed while the session lives (the person's `mv proj proj2`) is still that
// session's root: its jail keeps the directory, whatever it is called. The MCP launch judges the
// command and the cwd by identity too (src/mcp-client/launch.ts, writableRootHolding), so a program a
// block planted, named at the root's new place, is refused and never runs; a server outside every
// root still starts beside the renamed one.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readlinkSync, realpathSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import type { Engine } from '../../src/engine/index.js'
import { stdioFixture, tempDir } from './helpers.js'
import { blockIn, launchRefusal, mcpEngine } from './launch-engine.js'

const base = realpathSync(tempDir('launch-renamed'))
const home = join(base, 'home')
const R = join(base, 'proj')
const R2 = join(base, 'proj2')
const outside = join(base, 'outside')
const marker = join(outside, 'planted-ran')
const tsx = import.meta.resolve('tsx')
const servers = {
  plain: {
    command: 'node',
    args: ['--import', tsx, stdioFixture, 'plain'],
    cwd: outside,
    connect_timeout_ms: 60_000,
  },
  command: { command: join(R2, 'tools', 'server'), args: [] },
  incwd: { command: 'node', args: ['--import', tsx, stdioFixture, 'incwd'], cwd: join(R2, 'sub') },
}
let engine: Engine
let session: string

before(async () => {
  for (const d of [home, R, outside]) mkdirSync(d)
  engine = await mcpEngine(home, servers)
  session = (await engine.createSession({ roots: [R] })).id
  // The block plants a server program and a folder for a cwd; then the person moves the project.
  const b = await block(
    [
      'import os',
      "os.makedirs('tools')",
      "os.makedirs('sub')",
      `open('tools/server', 'w').write(${JSON.stringify(`#!/bin/sh\necho "planted ran: $0" > ${JSON.stringify(marker)}\n`)})`,
      "os.chmod('tools/server', 0o755)",
      "print('planted')",
    ].join('\n'),
  )
  assert.equal(b.error, null, JSON.stringify(b.error))
  renameSync(R, R2)
})
after(async () => {
  await engine?.close()
})

const block = (code: string) => blockIn(engine, session, code)
const refusal = (name: keyof typeof servers) => launchRefusal(name, servers[name], 'launch-renamed', home)

test('a command in a live root renamed since its session began is refused: mcp.launch-denied, never run', async () => {
  const b = await block("mcp_connect('command')")
  assert.equal(existsSync(marker), false, 'the planted command ran on the host')
  assert.equal(await refusal('command'), 'mcp.launch-denied')
  assert.equal(existsSync(marker), false, 'the planted command ran on the host')
  assert.ok(b.error, 'mcp_connect succeeded')
  assert.match(
    b.error.message,
    /its command .*proj2\/tools\/server lies in the session root .*proj \(renamed since its session began\)/,
  )
})

test('a cwd in a live root renamed since its session began is refused: mcp.launch-denied', async () => {
  const b = await block("mcp_connect('incwd')")
  assert.equal(await refusal('incwd'), 'mcp.launch-denied')
  assert.ok(b.error, 'mcp_connect succeeded')
  assert.match(b.error.message, /its cwd .*proj2\/sub lies in the session root .*proj \(renamed/)
})

test('a server outside every root still starts in its configured cwd beside the renamed root', async () => {
  const b = await block('mcp_plain_pid()')
  assert.equal(b.error, null, JSON.stringify(b.error))
  assert.equal(readlinkSync(`/proc/${Number(b.result)}/cwd`), outside)
})
