// A batch of events is stored with multi-row INSERTs (32 rows a statement): every event of a
// batch of any size keeps its seq, type, data and order, and retention still trims the oldest.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Store } from '../../src/persistence/index.js'
import { BACKENDS, openTempStore, tempPlace } from './helpers.js'

const batch = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => ({
    type: i % 2 ? 'output' : 'block.started',
    data: { tag, i, s: 'é\n'.repeat(i) },
  }))

for (const backend of BACKENDS) {
  describe(backend, () => {
    test('batches across the statement size (1, 31, 32, 33, 70 events) store every event in order', () => {
      const store = openTempStore({ now: () => 5000 }, backend)
      const s = store.sessions.create()
      let seq = 0
      for (const n of [1, 31, 32, 33, 70]) {
        const events = batch(n, `b${n}`)
        const stored = store.events.appendMany(s.id, events)
        assert.deepEqual(
          stored.map((e) => [e.seq, e.type, e.data, e.createdAt]),
          events.map((e, i) => [seq + i + 1, e.type, e.data, 5000]),
        )
        const replayed = store.events.replay(s.id, seq, 1000)
        assert.deepEqual(
          replayed.events.map((e) => [e.seq, e.type, e.data]),
          events.map((e, i) => [seq + i + 1, e.type, e.data]),
        )
        seq += n
        assert.equal(replayed.lastSeq, seq)
      }
      assert.equal(store.sessions.require(s.id).lastEventSeq, seq)
    })

    test('a batch larger than the retention keeps only the newest events, and seqs go on after a reopen', () => {
      const place = tempPlace(backend)
      let store = new Store({ ...place, eventRetention: 10 })
      const s = store.sessions.create()
      store.events.appendMany(s.id, batch(45, 'big'))
      let r = store.events.replay(s.id, 0)
      assert.deepEqual(
        r.events.map((e) => e.seq),
        Array.from({ length: 10 }, (_, i) => 36 + i),
      )
      assert.equal(r.gap, true)
      store.close()
      store = new Store({ ...place, eventRetention: 10 })
      try {
        assert.equal(store.events.append(s.id, { type: 'x' }).seq, 46)
        r = store.events.replay(s.id, 44)
        assert.deepEqual(
          r.events.map((e) => [e.seq, e.data]),
          [
            [45, { tag: 'big', i: 44, s: 'é\n'.repeat(44) }],
            [46, null],
          ],
        )
      } finally {
        store.close()
      }
    })
  })
}
