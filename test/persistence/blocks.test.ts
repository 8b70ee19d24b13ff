import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { constraintViolation } from '../../src/persistence/constraint.js'
import { Store } from '../../src/persistence/index.js'
import { isVisError } from '../../src/util/errors.js'
import { BACKENDS, openTempStore, tempPlace } from './helpers.js'

for (const backend of BACKENDS) {
  describe(backend, () => {
    test('sessions are created, listed newest first, closed and reopened with their history', () => {
      const place = tempPlace(backend)
      let store = new Store(place)
      const a = store.sessions.create({ title: 'first', policy: { roots: ['/tmp'], network: false } })
      const b = store.sessions.create({ id: 'ses_fixed' })
      assert.equal(b.id, 'ses_fixed')
      assert.match(a.id, /^ses_[0-9a-f]{32}$/)
      assert.throws(
        () => store.sessions.create({ id: 'ses_fixed' }),
        (e: unknown) => isVisError(e, 'db.session-exists'),
      )
      const { block } = store.blocks.start({ sessionId: a.id, code: 'x = 1' })
      store.blocks.finish(block.id, { stdout: 'done\n', durationMs: 3 })
      store.defs.put(a.id, { defs: ['x'], source: 'x = 1' })
      const closed = store.sessions.close(b.id)
      assert.ok(closed.closedAt !== null)
      assert.equal(store.sessions.close(b.id).closedAt, closed.closedAt)
      store.close()

      store = new Store(place)
      try {
        assert.deepEqual(
          store.sessions.list({ state: 'open' }).map((s) => s.id),
          [a.id],
        )
        assert.deepEqual(
          store.sessions.list({ state: 'closed' }).map((s) => s.id),
          ['ses_fixed'],
        )
        assert.equal(store.sessions.count(), 2)
        assert.deepEqual(store.sessions.require(a.id).policy, { roots: ['/tmp'], network: false })
        const [again] = store.blocks.listBySession(a.id)
        assert.equal(again?.stdout, 'done\n')
        assert.equal(again?.status, 'done')
        assert.deepEqual(store.defs.get(a.id)?.snapshot, { defs: ['x'], source: 'x = 1' })
        assert.throws(
          () => store.sessions.require('nope'),
          (e: unknown) => isVisError(e, 'db.session-not-found'),
        )
      } finally {
        store.close()
      }
    })

    test('blocks take consecutive positions per session and record their outcome once', () => {
      const store = openTempStore({}, backend)
      const s1 = store.sessions.create()
      const s2 = store.sessions.create()
      const p = [s1, s1, s2, s1].map(
        (s) => store.blocks.start({ sessionId: s.id, code: 'pass' }).block.position,
      )
      assert.deepEqual(p, [1, 2, 1, 3])

      const { block } = store.blocks.start({ sessionId: s1.id, code: '1/0' })
      assert.equal(block.status, 'running')
      assert.equal(block.finishedAt, null)
      const done = store.blocks.finish(block.id, {
        stdout: 'before\n',
        error: {
          code: 'python.exception',
          message: 'ZeroDivisionError: division by zero',
          traceback: 'Traceback...',
        },
        durationMs: 12,
        timedOut: false,
      })
      assert.equal(done.status, 'done')
      assert.equal(done.error?.message, 'ZeroDivisionError: division by zero')
      assert.equal(done.durationMs, 12)
      assert.throws(
        () => store.blocks.finish(block.id, { durationMs: 1 }),
        (e: unknown) => isVisError(e, 'db.block-finished') && e.context.sessionId === s1.id,
      )
      assert.equal(store.blocks.require(block.id).stdout, 'before\n')
      assert.deepEqual(store.blocks.counts(), { running: 4, done: 1 })
      assert.throws(
        () => store.blocks.start({ sessionId: 'nope', code: '' }),
        (e: unknown) => isVisError(e, 'db.session-not-found'),
      )
      assert.throws(
        () => store.blocks.finish(block.id, { durationMs: -5 }),
        (e: unknown) => isVisError(e, 'db.invalid-input') && /durationMs/.test(e.message),
      )
    })

    test('an idempotency key returns the first block on a retry and is scoped to its session', () => {
      const store = openTempStore({}, backend)
      const s1 = store.sessions.create()
      const s2 = store.sessions.create()
      const first = store.blocks.start({ sessionId: s1.id, code: 'print(1)', idempotencyKey: 'req-1' })
      const retry = store.blocks.start({ sessionId: s1.id, code: 'print(1)', idempotencyKey: 'req-1' })
      assert.equal(first.replayed, false)
      assert.equal(retry.replayed, true)
      assert.equal(retry.block.id, first.block.id)
      assert.equal(store.blocks.listBySession(s1.id).length, 1)

      const other = store.blocks.start({ sessionId: s2.id, code: 'print(1)', idempotencyKey: 'req-1' })
      assert.equal(other.replayed, false)
      assert.notEqual(other.block.id, first.block.id)

      // The table itself refuses a second row for the same (session, key).
      assert.throws(
        () => store.idempotency.record(s1.id, 'req-1', other.block.id),
        (e: unknown) => isVisError(e, 'db.idempotency-conflict') && e.context.blockId === first.block.id,
      )
      assert.throws(
        () =>
          store.db
            .prepare(
              'INSERT INTO idempotency_keys (session_id, key, block_id, created_at) VALUES (?, ?, ?, 0)',
            )
            .run(s1.id, 'req-1', other.block.id),
        (e: unknown) => constraintViolation(e) === 'unique',
      )
      assert.equal(store.idempotency.lookup(s1.id, 'req-1'), first.block.id)
      assert.equal(store.idempotency.pruneOlderThan(-1000), 2)
      assert.equal(store.idempotency.lookup(s1.id, 'req-1'), undefined)
    })

    test('turns and iterations group blocks, and a block must name a turn and iteration of its own session', () => {
      const store = openTempStore({}, backend)
      const s = store.sessions.create()
      const other = store.sessions.create()
      const turn = store.turns.start({ sessionId: s.id, request: 'plot the data' })
      const it1 = store.turns.addIteration(turn.id)
      const it2 = store.turns.addIteration(turn.id)
      assert.deepEqual([turn.position, it1.position, it2.position], [1, 1, 2])
      const b = store.blocks.start({ sessionId: s.id, code: 'a', turnId: turn.id, iterationId: it2.id }).block
      assert.equal(b.iterationId, it2.id)
      assert.deepEqual(
        store.blocks.listByTurn(turn.id).map((x) => x.id),
        [b.id],
      )
      assert.throws(
        () => store.blocks.start({ sessionId: other.id, code: 'a', turnId: turn.id }),
        (e: unknown) => isVisError(e, 'db.turn-not-found'),
      )
      const turn2 = store.turns.start({ sessionId: s.id })
      assert.throws(
        () => store.blocks.start({ sessionId: s.id, code: 'a', turnId: turn2.id, iterationId: it1.id }),
        (e: unknown) => isVisError(e, 'db.iteration-not-found'),
      )
      const finished = store.turns.finish(turn.id, 'done')
      assert.equal(finished.status, 'done')
      assert.ok(finished.finishedAt !== null)
      assert.throws(
        () => store.turns.addIteration(turn.id),
        (e: unknown) => isVisError(e, 'db.turn-finished'),
      )
      assert.throws(
        () => store.turns.finish(turn.id, 'failed'),
        (e: unknown) => isVisError(e, 'db.turn-finished'),
      )
      assert.deepEqual(
        store.turns.listIterationsBySession(s.id).map((i) => i.id),
        [it1.id, it2.id],
      )
    })

    test('blocks left running by a dead host are closed as abandoned, per session or all', () => {
      const store = openTempStore({}, backend)
      const s1 = store.sessions.create()
      const s2 = store.sessions.create()
      const r1 = store.blocks.start({ sessionId: s1.id, code: 'while True: pass' }).block
      const r2 = store.blocks.start({ sessionId: s2.id, code: 'while True: pass' }).block
      const ok = store.blocks.start({ sessionId: s1.id, code: 'pass' }).block
      store.blocks.finish(ok.id, { durationMs: 1 })
      assert.equal(store.blocks.abandonRunning(s1.id), 1)
      const a1 = store.blocks.require(r1.id)
      assert.equal(a1.status, 'done')
      assert.equal(a1.error?.code, 'block.abandoned')
      assert.equal(store.blocks.require(r2.id).status, 'running')
      assert.equal(store.blocks.require(ok.id).error, null)
      assert.equal(store.blocks.abandonRunning(), 1)
      assert.equal(store.blocks.counts().running, 0)
    })
    test('a block stored only when finished takes the next position, with its outcome and attachments', () => {
      let clock = 5000
      const store = openTempStore({ now: () => clock }, backend)
      const s = store.sessions.create()
      const first = store.blocks.start({ sessionId: s.id, code: 'a = 1' }).block
      store.blocks.finish(first.id, { durationMs: 1 })
      clock = 6000
      const done = store.blocks.startFinished(
        { id: 'blk_later', sessionId: s.id, code: 'print("hi")', createdAt: 5500 },
        {
          stdout: 'hi\n',
          result: { n: 2 },
          durationMs: 7,
          attachments: [{ mediaType: 'text/plain', name: 'a.txt', data: new TextEncoder().encode('abc') }],
        },
      )
      assert.equal(done.id, 'blk_later')
      assert.equal(done.position, first.position + 1)
      assert.equal(done.status, 'done')
      assert.equal(done.createdAt, 5500)
      assert.equal(done.finishedAt, 6000)
      assert.deepEqual(done.result, { n: 2 })
      assert.deepEqual(store.blocks.require('blk_later'), done)
      assert.deepEqual(
        store.attachments.listByBlock(done.id).map((a) => [a.name, a.size]),
        [['a.txt', 3]],
      )
      assert.equal(store.blocks.counts().running, 0)
      // The same checks as start(): a missing session, an id taken, a key (stored when accepted).
      assert.throws(
        () => store.blocks.startFinished({ sessionId: 'ses_missing', code: '' }, { durationMs: 0 }),
        (e: unknown) => isVisError(e, 'db.session-not-found'),
      )
      assert.throws(
        () => store.blocks.startFinished({ id: 'blk_later', sessionId: s.id, code: '' }, { durationMs: 0 }),
        (e: unknown) => isVisError(e, 'db.block-exists'),
      )
      assert.throws(
        () =>
          store.blocks.startFinished({ sessionId: s.id, code: '', idempotencyKey: 'k' }, { durationMs: 0 }),
        (e: unknown) => isVisError(e, 'db.invalid-input'),
      )
      assert.equal(store.blocks.listBySession(s.id).length, 2)
    })
  })
}
