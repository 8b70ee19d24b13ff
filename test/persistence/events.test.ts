import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Store } from '../../src/persistence/index.js'
import { isVisError } from '../../src/util/errors.js'
import { BACKENDS, openTempStore, tempPlace } from './helpers.js'

for (const backend of BACKENDS) {
  describe(backend, () => {
    test('event seqs are consecutive per session, independent across sessions', () => {
      const store = openTempStore({}, backend)
      const a = store.sessions.create()
      const b = store.sessions.create()
      const seqs = [a, a, b, a, b].map(
        (s, i) => store.events.append(s.id, { type: 'output', data: { i } }).seq,
      )
      assert.deepEqual(seqs, [1, 2, 1, 3, 2])
      const batch = store.events.appendMany(a.id, [{ type: 'x' }, { type: 'y', data: 'chunk' }])
      assert.deepEqual(
        batch.map((e) => [e.seq, e.type, e.data]),
        [
          [4, 'x', null],
          [5, 'y', 'chunk'],
        ],
      )
      assert.equal(store.events.lastSeq(a.id), 5)
      assert.equal(store.sessions.require(a.id).lastEventSeq, 5)
      assert.throws(
        () => store.events.append('nope', { type: 'x' }),
        (e: unknown) => isVisError(e, 'db.session-not-found'),
      )
      assert.throws(
        () => store.events.append(a.id, { type: '' }),
        (e: unknown) => isVisError(e, 'db.invalid-input'),
      )
    })

    test('replay returns exactly the events after a seq, in order, and survives a reopen', () => {
      const place = tempPlace(backend)
      let store = new Store(place)
      const s = store.sessions.create()
      for (let i = 1; i <= 10; i++)
        store.events.append(s.id, { type: 'output', data: { chunk: `line ${i}` } })
      store.close()
      store = new Store(place)
      try {
        const r = store.events.replay(s.id, 6)
        assert.deepEqual(
          r.events.map((e) => e.seq),
          [7, 8, 9, 10],
        )
        assert.deepEqual(r.events[0]?.data, { chunk: 'line 7' })
        assert.equal(r.gap, false)
        assert.equal(r.lastSeq, 10)
        assert.deepEqual(store.events.replay(s.id, 10).events, [])
        assert.equal(store.events.replay(s.id, 10).gap, false)
        const limited = store.events.replay(s.id, 0, 3)
        assert.deepEqual(
          limited.events.map((e) => e.seq),
          [1, 2, 3],
        )
        assert.equal(limited.lastSeq, 10)
        assert.equal(store.events.append(s.id, { type: 'after-restart' }).seq, 11)
      } finally {
        store.close()
      }
    })

    test('a long session is trimmed in steps: never fewer than the retention, at most 1/8 more', () => {
      const retention = 80
      const store = openTempStore({ eventRetention: retention }, backend)
      try {
        const s = store.sessions.create()
        const kept: number[] = []
        for (let i = 1; i <= 200; i++) {
          store.events.append(s.id, { type: 'tick', data: i })
          const r = store.events.replay(s.id, 0, 1000)
          // The newest events are always there, in order, ending with the one just appended.
          assert.equal(r.events.at(-1)?.seq, i)
          assert.deepEqual(
            r.events.map((e) => e.seq),
            Array.from({ length: r.events.length }, (_, k) => i - r.events.length + 1 + k),
          )
          kept.push(r.events.length)
        }
        // Until the retention is reached nothing goes; past it, between `retention` and
        // `retention + 9` stay (trimmed back each time another 10 have come).
        assert.deepEqual(
          kept.slice(0, retention),
          Array.from({ length: retention }, (_, k) => k + 1),
        )
        const after = kept.slice(retention)
        assert.ok(
          after.every((n) => n >= retention && n < retention + 10),
          JSON.stringify(after),
        )
        assert.ok(after.includes(retention) && after.includes(retention + 9), JSON.stringify(after))
        // A client that asks for what was trimmed is told about the gap.
        assert.equal(store.events.replay(s.id, 0).gap, true)
      } finally {
        store.close()
      }
    })

    test('retention keeps the newest events per session, reports a gap, and never reuses a seq', () => {
      const store = openTempStore({ eventRetention: 5 }, backend)
      const s = store.sessions.create()
      const quiet = store.sessions.create()
      store.events.append(quiet.id, { type: 'one' })
      for (let i = 0; i < 12; i++) store.events.append(s.id, { type: 'tick', data: i })
      const all = store.events.replay(s.id, 0)
      assert.deepEqual(
        all.events.map((e) => e.seq),
        [8, 9, 10, 11, 12],
      )
      assert.equal(all.gap, true)
      assert.equal(store.events.replay(s.id, 7).gap, false)
      assert.equal(store.events.replay(s.id, 6).gap, true)
      assert.equal(
        store.db.prepare('SELECT count(*) FROM session_events WHERE session_id = ?').pluck().get(s.id),
        5,
      )
      // Another session's log is not pruned by this one's traffic.
      assert.equal(store.events.replay(quiet.id, 0).events.length, 1)
      // Deleting the retained events by hand does not rewind the counter.
      store.db.prepare('DELETE FROM session_events WHERE session_id = ?').run(s.id)
      assert.equal(store.events.append(s.id, { type: 'tick' }).seq, 13)
      assert.equal(store.events.replay(s.id, 5).gap, true)
    })
  })
}
