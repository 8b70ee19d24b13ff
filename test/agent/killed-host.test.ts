// A host killed in the middle of a turn (SIGKILL, nothing flushed on the way out) leaves the turn's
// row and each iteration the model answered stored: the iteration's commit waits for no fsync
// (issue 34), but it is a commit, never state held in memory until later.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { AgentRecords } from '../../src/agent/records.js'
import { openStore } from '../../src/persistence/index.js'

const fixture = fileURLToPath(new URL('./fixtures/killed-turn.ts', import.meta.url))

test('a host killed mid-turn keeps the turn, its answered iteration and the block it ran', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-killed-home-'))
  const child = spawn(process.execPath, ['--import', 'tsx', fixture], {
    env: { ...process.env, VIS_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (d) => {
    stderr += d
  })
  const exited = new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_code, signal) => r(signal)))
  const ids = await new Promise<{ sessionId: string; turnId: string }>((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      const nl = out.indexOf('\n')
      if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)))
    })
    child.on('exit', () => reject(new Error(`the host exited before its block ended: ${stderr}`)))
  })
  child.kill('SIGKILL')
  assert.equal(await exited, 'SIGKILL')

  const store = openStore({ home })
  try {
    const turn = new AgentRecords(store).turn(ids.turnId)
    assert.ok(turn, 'the turn row is stored')
    assert.equal(turn.model, 'openai/double-model')
    assert.equal(turn.status, 'running')
    assert.equal(turn.iterations.length, 1)
    const [iteration] = turn.iterations
    assert.match(JSON.stringify(iteration?.tool_calls), /x = 41/)
    assert.equal(iteration?.block_ids.length, 1)
    const block = store.blocks.get(iteration!.block_ids[0]!)
    assert.equal(block?.status, 'done')
  } finally {
    store.close()
  }
})
