// The engine on PostgreSQL (issue 19): the same engine code, real workers, state in a real
// PostgreSQL started by test/helpers/postgres.ts. What differs from SQLite: a restarting node
// must not close blocks that may be running on another node.
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { createEngine, type EventView } from '../../src/engine/index.js'
import { openStore } from '../../src/persistence/index.js'
import { isVisError } from '../../src/util/errors.js'
import { freshDatabaseUrl } from '../helpers/postgres.js'

const python = process.env.VIS_PYTHON_VERSION
const newHome = () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-engine-pg-'))
  process.env.VIS_HOME = home
  return home
}

test('sessions, blocks and events live in PostgreSQL and outlive the engine', async () => {
  const databaseUrl = freshDatabaseUrl()
  const e1 = await createEngine({ home: newHome(), python, pool: { size: 0 }, databaseUrl })
  assert.equal(e1.store.dialect, 'postgres')
  const s = await e1.createSession({ title: 'on pg' })
  const seen: EventView[] = []
  const off = e1.subscribe(s.id, (ev) => seen.push(ev))
  const r = await e1.runBlock(
    s.id,
    { code: 'def sq(x):\n    return x * x\nprint(sq(4))' },
    { idempotencyKey: 'first' },
  )
  assert.equal(r.block.stdout, '16\n')
  const retry = await e1.runBlock(
    s.id,
    { code: 'def sq(x):\n    return x * x\nprint(sq(4))' },
    { idempotencyKey: 'first' },
  )
  assert.equal(retry.block.id, r.block.id)
  assert.equal(retry.replayed, true)
  await assert.rejects(e1.runBlock(s.id, { code: 'print(1)' }, { idempotencyKey: 'first' }), (e) =>
    isVisError(e, 'idempotency.key-reused'),
  )
  off()
  assert.ok(seen.some((e) => e.type === 'block.finished'))
  await e1.close()

  // Another node (its own home) on the same database sees everything and restores the defs.
  const e2 = await createEngine({ home: newHome(), python, pool: { size: 0 }, databaseUrl })
  try {
    assert.equal(e2.sessionView(s.id).title, 'on pg')
    const again = await e2.runBlock(s.id, { code: 'sq(5)' })
    assert.equal(again.block.result, 25, JSON.stringify(again.block.error))
    assert.equal(again.block.position, 2)
    const replay = e2.replayEvents(s.id, 0)
    assert.equal(replay.gap, false)
    assert.deepEqual(
      replay.events.map((e) => e.id),
      replay.events.map((_, i) => i + 1),
    )
    assert.ok(replay.events.some((e) => e.type === 'defs.restored'))
  } finally {
    await e2.close()
  }
})

test('a node starting on PostgreSQL leaves other nodes running blocks alone', async () => {
  const databaseUrl = freshDatabaseUrl()
  const other = openStore({ home: newHome(), databaseUrl })
  other.sessions.create({ id: 'ses_elsewhere', policy: { roots: [], network: {}, shell: false } })
  const { block } = other.blocks.start({ sessionId: 'ses_elsewhere', code: 'while True: pass' })
  const engine = await createEngine({ home: newHome(), python, pool: { size: 0 }, databaseUrl })
  try {
    assert.equal(engine.abandonedAtStart, 0)
    assert.equal(engine.getBlock(block.id).status, 'running')
    // The takeover path closes them explicitly, for the sessions it takes over.
    const closed = engine.store.blocks.abandonRunningIn(['ses_elsewhere'], 'its node died')
    assert.deepEqual(
      closed.map((b) => [b.id, b.status, b.error?.code]),
      [[block.id, 'done', 'block.abandoned']],
    )
    assert.equal(other.blocks.require(block.id).error?.message, 'its node died')
  } finally {
    await engine.close()
    other.close()
  }
})
