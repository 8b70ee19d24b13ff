// Nested transactions (Statements.tx): a savepoint each, unless the enclosing body promised
// 'atomic' (nothing in it catches a nested failure and goes on), where they run flat. The
// promise is checked: a flat failure that someone swallowed still rolls the whole thing back.
// A caller that does catch and go on asks for a real savepoint (recoverable), and code the
// body does not control (event listeners) runs under withSavepoints.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Store } from '../../src/persistence/index.js'
import { BACKENDS, openTempStore } from './helpers.js'

const exists = (store: Store, id: string) => store.sessions.get(id) !== undefined

// A nested transaction that writes, then fails: what is left of its write tells whether it
// ran flat (the row is there until the outer transaction rolls back) or in a savepoint.
function failingNested(store: Store, id: string, options?: Parameters<Store['transaction']>[1]): void {
  store.transaction(() => {
    store.sessions.create({ id })
    throw new Error(`inner ${id} failed`)
  }, options)
}

// An atomic transaction that writes 'outer' and then runs body.
function atomicWithOuter(store: Store, body: () => void): void {
  store.transaction(
    () => {
      store.sessions.create({ id: 'outer' })
      body()
    },
    { nested: 'atomic' },
  )
}

for (const backend of BACKENDS) {
  describe(backend, () => {
    test('by default a nested failure that the body catches is rolled back alone; the rest commits', () => {
      const store = openTempStore({}, backend)
      store.transaction(() => {
        store.sessions.create({ id: 'outer' })
        assert.throws(() => failingNested(store, 'inner'), /inner inner failed/)
        assert.equal(exists(store, 'inner'), false, 'the savepoint undid the inner write')
      })
      assert.equal(exists(store, 'outer'), true)
      assert.equal(exists(store, 'inner'), false)
    })

    test('in an atomic body a nested transaction runs flat and commits with the outer one', () => {
      const store = openTempStore({}, backend)
      const s = store.sessions.create({ id: 's' })
      const events = store.transaction(
        () => {
          store.sessions.create({ id: 'outer' })
          return store.events.appendMany(s.id, [{ type: 'a' }, { type: 'b' }])
        },
        { nested: 'atomic' },
      )
      assert.deepEqual(
        events.map((e) => e.seq),
        [1, 2],
      )
      assert.equal(exists(store, 'outer'), true)
      assert.equal(store.events.lastSeq(s.id), 2)
    })

    test('in an atomic body a swallowed nested failure still aborts the whole transaction, with that failure', () => {
      const store = openTempStore({}, backend)
      assert.throws(
        () =>
          atomicWithOuter(store, () => {
            try {
              failingNested(store, 'inner')
            } catch {
              // Breaks the atomic promise: the flat inner write is still there...
            }
            assert.equal(exists(store, 'inner'), true, 'no savepoint: the inner write is not undone yet')
          }),
        /inner inner failed/,
      )
      // ...so nothing commits, neither the outer write nor half of the inner transaction.
      assert.equal(exists(store, 'outer'), false)
      assert.equal(exists(store, 'inner'), false)
      // The store is usable afterwards, and the next transaction starts clean.
      store.transaction(() => store.sessions.create({ id: 'next' }), { nested: 'atomic' })
      assert.equal(exists(store, 'next'), true)
    })

    test('a recoverable transaction is a real savepoint even in an atomic body', () => {
      const store = openTempStore({}, backend)
      atomicWithOuter(store, () => {
        assert.throws(() => failingNested(store, 'inner', { recoverable: true }), /inner inner failed/)
        assert.equal(exists(store, 'inner'), false)
        // Its own body may be atomic: a flat failure inside it aborts only the savepoint.
        assert.throws(
          () =>
            store.transaction(
              () => {
                store.sessions.create({ id: 'middle' })
                try {
                  failingNested(store, 'deep')
                } catch {}
              },
              { recoverable: true, nested: 'atomic' },
            ),
          /inner deep failed/,
        )
        assert.equal(exists(store, 'middle'), false)
      })
      assert.equal(exists(store, 'outer'), true)
      assert.equal(exists(store, 'inner'), false)
      assert.equal(exists(store, 'deep'), false)
    })

    test('withSavepoints: code the atomic body does not control gets savepoints again', () => {
      const store = openTempStore({}, backend)
      atomicWithOuter(store, () => {
        assert.equal(store.inAtomicTransaction, true)
        store.withSavepoints(() => {
          assert.equal(store.inAtomicTransaction, false)
          try {
            failingNested(store, 'listener')
          } catch {}
        })
        assert.equal(store.inAtomicTransaction, true)
        assert.equal(exists(store, 'listener'), false)
      })
      assert.equal(store.inAtomicTransaction, false)
      assert.equal(exists(store, 'outer'), true)
      assert.equal(exists(store, 'listener'), false)
    })

    test('a nested atomic body inside a default one: only the body that promised runs flat', () => {
      const store = openTempStore({}, backend)
      store.transaction(() => {
        store.sessions.create({ id: 'outer' })
        // A savepoint (the outer body promised nothing) whose own body is atomic; it fails whole.
        assert.throws(
          () =>
            store.transaction(
              () => {
                store.sessions.create({ id: 'a' })
                failingNested(store, 'b')
              },
              { nested: 'atomic' },
            ),
          /inner b failed/,
        )
        assert.equal(exists(store, 'a'), false)
        assert.equal(exists(store, 'b'), false)
      })
      assert.equal(exists(store, 'outer'), true)
    })
  })
}
