import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { isVisError } from '../../src/util/errors.js'
import { BACKENDS, openTempStore } from './helpers.js'

// turns.start and turns.addIteration run on every agent turn and iteration, and return the row
// they wrote without reading it back (issue 34): what they return must be what a read returns.
for (const backend of BACKENDS) {
  describe(backend, () => {
    test('a started turn and its iterations are returned as they are stored', () => {
      const store = openTempStore({}, backend)
      const s = store.sessions.create()
      const first = store.turns.start({ sessionId: s.id, request: { prompt: 'plot', n: [1, 2] } })
      assert.deepEqual(first, store.turns.get(first.id))
      const second = store.turns.start({ sessionId: s.id })
      assert.deepEqual(second, store.turns.get(second.id))
      assert.deepEqual([first.position, second.position, second.request], [1, 2, null])
      const its = [store.turns.addIteration(second.id), store.turns.addIteration(second.id, 'iter_named')]
      for (const it of its) assert.deepEqual(it, store.turns.getIteration(it.id))
      assert.deepEqual(
        its.map((i) => [i.id === 'iter_named', i.position, i.turnId]),
        [
          [false, 1, second.id],
          [true, 2, second.id],
        ],
      )
    })

    test('a request that is not JSON is refused with its key path, and no turn is stored', () => {
      const store = openTempStore({}, backend)
      const s = store.sessions.create()
      for (const request of [
        { prompt: 'x', n: [1, Number.NaN] },
        { prompt: 'x', when: new Date(0) },
      ]) {
        assert.throws(
          () => store.turns.start({ sessionId: s.id, request: request as never }),
          (e: unknown) =>
            isVisError(e, 'db.invalid-input') && /^turns\.start: request\b/.test((e as Error).message),
        )
      }
      assert.deepEqual(store.turns.listBySession(s.id), [])
      const turn = store.turns.start({ sessionId: s.id, request: 'plain text' })
      assert.equal(store.turns.sessionOf(turn.id), s.id)
      assert.equal(store.turns.sessionOf('turn_missing'), undefined)
    })

    test('an iteration of a turn that does not exist or has ended is refused, and nothing is stored', () => {
      const store = openTempStore({}, backend)
      const s = store.sessions.create()
      assert.throws(
        () => store.turns.start({ sessionId: 'sess_missing' }),
        (e: unknown) => isVisError(e, 'db.session-not-found'),
      )
      assert.throws(
        () => store.turns.addIteration('turn_missing'),
        (e: unknown) => isVisError(e, 'db.turn-not-found') && /turn_missing/.test((e as Error).message),
      )
      const turn = store.turns.start({ sessionId: s.id })
      store.turns.finish(turn.id, 'failed')
      assert.throws(
        () => store.turns.addIteration(turn.id),
        (e: unknown) =>
          isVisError(e, 'db.turn-finished') &&
          (e as Error).message === `Turn ${turn.id} is failed; it takes no new iterations.` &&
          (e as { context?: { sessionId?: string } }).context?.sessionId === s.id,
      )
      assert.deepEqual(store.turns.listIterations(turn.id), [])
      assert.deepEqual(
        store.turns.listBySession(s.id).map((t) => t.id),
        [turn.id],
      )
    })
  })
}
