// A block's start and finish return the row they wrote (RETURNING), with the position computed
// inside the INSERT, on both backends; and on PostgreSQL they cost the round trips counted here
// (each statement is one request to the driver's worker), so a change that adds one shows up.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { PgDatabase } from '../../src/persistence/postgres/database.js'
import { isVisError } from '../../src/util/errors.js'
import { BACKENDS, openTempStore } from './helpers.js'

for (const backend of BACKENDS) {
  describe(backend, () => {
    test('start and finish return exactly the stored row, at consecutive positions', () => {
      const store = openTempStore({}, backend)
      const s = store.sessions.create({ title: 'rt' })
      const first = store.blocks.start({ sessionId: s.id, code: 'a = 1', idempotencyKey: 'k1' })
      const second = store.blocks.start({ sessionId: s.id, code: 'b = 2' })
      assert.equal(first.replayed, false)
      assert.deepEqual([first.block.position, second.block.position], [1, 2])
      assert.deepEqual(first.block, store.blocks.get(first.block.id))
      assert.equal(first.block.status, 'running')
      // A retry with the same key gets the first block back, not a third one.
      const again = store.blocks.start({ sessionId: s.id, code: 'a = 1', idempotencyKey: 'k1' })
      assert.deepEqual(again, { block: first.block, replayed: true })

      const done = store.blocks.finish(second.block.id, {
        stdout: 'out\n',
        durationMs: 4,
        attachments: [
          { mediaType: 'text/plain', name: 'a.txt', data: Buffer.from('one') },
          { mediaType: 'text/plain', name: 'b.txt', data: Buffer.from('two') },
        ],
      })
      assert.deepEqual(done, store.blocks.get(second.block.id))
      assert.equal(done.status, 'done')
      assert.equal(done.stdout, 'out\n')
      assert.deepEqual(
        store.attachments.listByBlock(done.id).map((a) => [a.position, a.name]),
        [
          [1, 'a.txt'],
          [2, 'b.txt'],
        ],
      )
      assert.throws(
        () => store.blocks.finish(second.block.id, { durationMs: 1 }),
        (e: unknown) => isVisError(e, 'db.block-finished') && e.context.sessionId === s.id,
      )
      // The row lock's read stands in for the session check on PostgreSQL: a missing session is
      // still refused by name on both backends, and nothing is written.
      assert.throws(
        () => store.blocks.start({ sessionId: 'ses_missing', code: 'x' }),
        (e: unknown) => isVisError(e, 'db.session-not-found'),
      )
      assert.equal(store.blocks.counts().running + store.blocks.counts().done, 2)
    })
  })
}

test('postgres: a block costs 5 round trips to start (with a key) and 2 to finish', () => {
  const store = openTempStore({}, 'postgres')
  const client = (store.db as PgDatabase).client
  const s = store.sessions.create({ title: 'rt' })
  // Warm: statements prepared (preparing rides along with the first execution anyway).
  store.blocks.finish(store.blocks.start({ sessionId: s.id, code: 'w', idempotencyKey: 'w' }).block.id, {
    durationMs: 1,
  })
  const count = (fn: () => void) => {
    const before = client.requests
    fn()
    return client.requests - before
  }
  let id = ''
  // Row lock (+ deferred BEGIN), key lookup, INSERT ... RETURNING, key record, COMMIT.
  assert.equal(
    count(() => {
      id = store.blocks.start({ sessionId: s.id, code: 'x', idempotencyKey: 'k' }).block.id
    }),
    5,
  )
  // UPDATE ... RETURNING (+ deferred BEGIN), COMMIT.
  assert.equal(
    count(() => store.blocks.finish(id, { durationMs: 1 })),
    2,
  )
  // Without a key: row lock, INSERT ... RETURNING, COMMIT.
  assert.equal(
    count(() => store.blocks.start({ sessionId: s.id, code: 'y' })),
    3,
  )
})
