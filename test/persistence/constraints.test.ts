import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { constraintViolation } from '../../src/persistence/constraint.js'
import { isVisError } from '../../src/util/errors.js'
import { BACKENDS, type Backend, openTempStore } from './helpers.js'

// The schema refuses bad rows by itself, so a bug in any writer (or a hand edit) cannot store them.
function setup(backend: Backend) {
  const store = openTempStore({}, backend)
  const session = store.sessions.create({ title: 't' })
  const { block } = store.blocks.start({ sessionId: session.id, code: 'print(1)' })
  const attach = store.db.prepare(
    `INSERT INTO attachments (id, block_id, position, media_type, size, sha256, data, storage_uri, created_at)
     VALUES (?, ?, ?, 'text/plain', ?, ?, ?, ?, 0)`,
  )
  return { store, session, block, attach }
}

const SHA = 'a'.repeat(64)
// The kind of constraint, whichever backend reports it (src/persistence/constraint.ts).
const check = (e: unknown) => constraintViolation(e) === 'check'

for (const backend of BACKENDS) {
  describe(backend, () => {
    test('an attachment must have exactly one of inline data and a storage URI', () => {
      const { block, attach } = setup(backend)
      assert.throws(() => attach.run('a1', block.id, 1, 0, SHA, null, null), check)
      assert.throws(
        () => attach.run('a2', block.id, 2, 3, SHA, Buffer.from('abc'), 'vis-blob:sha256/' + SHA),
        check,
      )
      // Each single form is accepted.
      attach.run('a3', block.id, 3, 3, SHA, Buffer.from('abc'), null)
      attach.run('a4', block.id, 4, 10, SHA, null, 'vis-blob:sha256/' + SHA)
    })

    test('inline attachment bytes must match the recorded size', () => {
      const { block, attach } = setup(backend)
      assert.throws(() => attach.run('a1', block.id, 1, 99, SHA, Buffer.from('abc'), null), check)
    })

    test('block status, timed_out and finish fields are checked together', () => {
      const { store, session } = setup(backend)
      const insert = store.db.prepare(
        `INSERT INTO blocks (id, session_id, position, code, status, timed_out, duration_ms, created_at, finished_at)
     VALUES (?, ?, ?, 'x', ?, ?, ?, 0, ?)`,
      )
      assert.throws(() => insert.run('b1', session.id, 10, 'exploded', 0, null, null), check)
      assert.throws(() => insert.run('b2', session.id, 11, 'done', 0, 5, null), check) // done without finished_at
      assert.throws(() => insert.run('b3', session.id, 12, 'running', 0, null, 7), check) // running but finished
      assert.throws(() => insert.run('b4', session.id, 13, 'done', 2, 5, 7), check)
      assert.throws(() => insert.run('b5', session.id, 14, 'done', 0, -1, 7), check)
      assert.throws(() => insert.run('b6', session.id, 15, 'running', 0, 5, null), check) // running with a duration
      insert.run('b7', session.id, 16, 'done', 1, 5, 7)
    })

    test('JSON columns reject text that is not JSON, and STRICT tables reject wrong types', () => {
      const { store, session, block } = setup(backend)
      assert.throws(
        () => store.db.prepare("UPDATE sessions SET policy = '{nope' WHERE id = ?").run(session.id),
        check,
      )
      assert.throws(
        () => store.db.prepare("UPDATE blocks SET error = 'oops' WHERE id = ?").run(block.id),
        check,
      )
      assert.throws(
        () => store.db.prepare("UPDATE blocks SET position = 'first' WHERE id = ?").run(block.id),
        (e: unknown) =>
          backend === 'sqlite'
            ? /cannot store TEXT value in INTEGER column/.test(String(e))
            : isVisError(e, 'db.query-failed') && e.context.pgCode === '22P02', // invalid_text_representation
      )
    })

    test('foreign keys are enforced and deleting a session cascades to everything it owns', () => {
      const { store, session, block } = setup(backend)
      assert.throws(
        () =>
          store.db
            .prepare(
              "INSERT INTO blocks (id, session_id, position, code, created_at) VALUES ('x', 'nope', 1, '', 0)",
            )
            .run(),
        (e: unknown) => constraintViolation(e) === 'foreign-key',
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
  })
}
