import assert from 'node:assert/strict'
import { test } from 'node:test'
import { openTempStore } from './helpers.js'

// The schema refuses bad rows by itself, so a bug in any writer (or a hand edit) cannot store them.
function setup() {
  const store = openTempStore()
  const session = store.sessions.create({ title: 't' })
  const { block } = store.blocks.start({ sessionId: session.id, code: 'print(1)' })
  const attach = store.db.prepare(
    `INSERT INTO attachments (id, block_id, position, media_type, size, sha256, data, storage_uri, created_at)
     VALUES (?, ?, ?, 'text/plain', ?, ?, ?, ?, 0)`,
  )
  return { store, session, block, attach }
}

const SHA = 'a'.repeat(64)
const constraint = /CHECK constraint failed|constraint failed/

test('an attachment must have exactly one of inline data and a storage URI', () => {
  const { block, attach } = setup()
  assert.throws(() => attach.run('a1', block.id, 1, 0, SHA, null, null), constraint)
  assert.throws(
    () => attach.run('a2', block.id, 2, 3, SHA, Buffer.from('abc'), 'vis-blob:sha256/' + SHA),
    constraint,
  )
  // Each single form is accepted.
  attach.run('a3', block.id, 3, 3, SHA, Buffer.from('abc'), null)
  attach.run('a4', block.id, 4, 10, SHA, null, 'vis-blob:sha256/' + SHA)
})

test('inline attachment bytes must match the recorded size', () => {
  const { block, attach } = setup()
  assert.throws(() => attach.run('a1', block.id, 1, 99, SHA, Buffer.from('abc'), null), constraint)
})

test('block status, timed_out and finish fields are checked together', () => {
  const { store, session } = setup()
  const insert = store.db.prepare(
    `INSERT INTO blocks (id, session_id, position, code, status, timed_out, duration_ms, created_at, finished_at)
     VALUES (?, ?, ?, 'x', ?, ?, ?, 0, ?)`,
  )
  assert.throws(() => insert.run('b1', session.id, 10, 'exploded', 0, null, null), constraint)
  assert.throws(() => insert.run('b2', session.id, 11, 'done', 0, 5, null), constraint) // done without finished_at
  assert.throws(() => insert.run('b3', session.id, 12, 'running', 0, null, 7), constraint) // running but finished
  assert.throws(() => insert.run('b4', session.id, 13, 'done', 2, 5, 7), constraint)
  assert.throws(() => insert.run('b5', session.id, 14, 'done', 0, -1, 7), constraint)
  assert.throws(() => insert.run('b6', session.id, 15, 'running', 0, 5, null), constraint) // running with a duration
  insert.run('b7', session.id, 16, 'done', 1, 5, 7)
})

test('JSON columns reject text that is not JSON, and STRICT tables reject wrong types', () => {
  const { store, session, block } = setup()
  assert.throws(
    () => store.db.prepare("UPDATE sessions SET policy = '{nope' WHERE id = ?").run(session.id),
    constraint,
  )
  assert.throws(
    () => store.db.prepare("UPDATE blocks SET error = 'oops' WHERE id = ?").run(block.id),
    constraint,
  )
  assert.throws(
    () => store.db.prepare("UPDATE blocks SET position = 'first' WHERE id = ?").run(block.id),
    /cannot store TEXT value in INTEGER column/,
  )
})

test('foreign keys are enforced and deleting a session cascades to everything it owns', () => {
  const { store, session, block } = setup()
  assert.throws(
    () =>
      store.db
        .prepare(
          "INSERT INTO blocks (id, session_id, position, code, created_at) VALUES ('x', 'nope', 1, '', 0)",
        )
        .run(),
    /FOREIGN KEY constraint failed/,
  )
  store.blocks.finish(block.id, {
    durationMs: 1,
    attachments: [{ mediaType: 'text/plain', data: Buffer.from('hi') }],
  })
  store.defs.put(session.id, { x: 1 })
  store.events.append(session.id, { type: 'block.finished', data: { id: block.id } })
  store.blocks.start({ sessionId: session.id, code: '', idempotencyKey: 'k' })
  assert.equal(store.sessions.delete(session.id), true)
  for (const table of ['blocks', 'attachments', 'session_defs', 'session_events', 'idempotency_keys']) {
    assert.equal(store.db.prepare(`SELECT count(*) FROM ${table}`).pluck().get(), 0, table)
  }
  assert.equal(store.sessions.delete(session.id), false)
})
