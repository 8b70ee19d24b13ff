// Storing a block in a session that does not exist: on SQLite a block outside any turn no
// longer reads the session first; the insert's foreign key refuses it, and that violation must
// come out as the very error the explicit check gave (code, message, context), on every path.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { type Store, Store as StoreClass } from '../../src/persistence/index.js'
import { isVisError, VisError } from '../../src/util/errors.js'
import { BACKENDS, openTempStore, tempPlace } from './helpers.js'

function sessionNotFound(err: unknown, id: string): boolean {
  assert.ok(err instanceof VisError, `a VisError, not ${String(err)}`)
  assert.equal(err.code, 'db.session-not-found')
  assert.equal(err.message, `No session with id ${id}.`)
  assert.deepEqual(err.context, { sessionId: id })
  return true
}

const blockCount = (store: Store) => store.blocks.counts().running + store.blocks.counts().done

for (const backend of BACKENDS) {
  describe(backend, () => {
    test('a running block, a finished one, a keyed one, one with a turn: the same session-not-found', () => {
      const store = openTempStore({}, backend)
      const s = store.sessions.create()
      const turn = store.turns.start({ sessionId: s.id })
      assert.throws(
        () => store.blocks.start({ sessionId: 'ses_missing', code: 'x = 1' }),
        (e) => sessionNotFound(e, 'ses_missing'),
      )
      assert.throws(
        () => store.blocks.startFinished({ sessionId: 'ses_missing', code: 'x = 1' }, { durationMs: 1 }),
        (e) => sessionNotFound(e, 'ses_missing'),
      )
      assert.throws(
        () => store.blocks.start({ sessionId: 'ses_missing', code: 'x = 1', idempotencyKey: 'k1' }),
        (e) => sessionNotFound(e, 'ses_missing'),
      )
      // A turn of another session: the missing session is still what is reported first.
      assert.throws(
        () => store.blocks.start({ sessionId: 'ses_missing', code: 'x = 1', turnId: turn.id }),
        (e) => sessionNotFound(e, 'ses_missing'),
      )
      // Inside an outer transaction too (a block's finish stores its row there).
      assert.throws(
        () =>
          store.transaction(
            () => store.blocks.startFinished({ sessionId: 'ses_missing', code: '' }, { durationMs: 0 }),
            { nested: 'atomic' },
          ),
        (e) => sessionNotFound(e, 'ses_missing'),
      )
      assert.equal(blockCount(store), 0)
      // What exists still works, and other refusals keep their own errors.
      assert.equal(store.blocks.start({ sessionId: s.id, code: 'x = 1' }).block.position, 1)
      assert.throws(
        () => store.blocks.start({ sessionId: s.id, code: '', turnId: 'turn_missing' }),
        (e: unknown) => isVisError(e, 'db.turn-not-found'),
      )
      const first = store.blocks.start({ sessionId: s.id, code: 'x = 2' }).block
      assert.throws(
        () => store.blocks.start({ id: first.id, sessionId: s.id, code: '' }),
        (e: unknown) => isVisError(e, 'db.block-exists'),
      )
      assert.equal(blockCount(store), 2)
    })

    test('a session deleted by another connection is refused the same way', () => {
      const place = tempPlace(backend)
      const store = new StoreClass(place)
      const other = new StoreClass(place)
      try {
        const s = store.sessions.create()
        store.blocks.start({ sessionId: s.id, code: 'x = 1' })
        assert.equal(other.sessions.delete(s.id), true)
        assert.throws(
          () => store.blocks.startFinished({ sessionId: s.id, code: 'x = 2' }, { durationMs: 0 }),
          (e) => sessionNotFound(e, s.id),
        )
      } finally {
        other.close()
        store.close()
      }
    })
  })
}

test('sqlite: the foreign key the mapping relies on is enforced on the connection vis opens', () => {
  const store = openTempStore()
  assert.equal(store.sqlite?.pragma('foreign_keys', { simple: true }), 1)
})
