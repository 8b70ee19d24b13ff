// The block hot path's shortcuts (issue 15 §5): they must skip only work that changes nothing.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Store } from '../../src/persistence/index.js'
import { isVisError } from '../../src/util/errors.js'
import { openTempStore, tempHome } from './helpers.js'

const changes = (store: Store) => store.db.prepare('SELECT total_changes()').pluck().get() as number

test('an unchanged defs snapshot is not rewritten; a changed one is, and reopening restores the latest', () => {
  const home = tempHome()
  let clock = 1000
  let store = new Store({ home, now: () => clock })
  const s = store.sessions.create({})
  const first = { version: 1, items: [{ name: 'x', kind: 'const', source: 'x = 1' }] }
  assert.equal(store.defs.write(s.id, first), true)
  clock = 2000
  const before = changes(store)
  // The same content as a new object (what the guest sends after each block): no row write.
  assert.equal(store.defs.write(s.id, structuredClone(first)), false)
  assert.equal(changes(store), before)
  assert.equal(store.defs.get(s.id)?.updatedAt, 1000)
  const second = { version: 1, items: [...first.items, { name: 'f', kind: 'def', source: 'def f(): pass' }] }
  clock = 3000
  assert.equal(store.defs.write(s.id, second), true)
  assert.equal(changes(store), before + 1)
  // Back to the first content is a change again, not "seen before".
  assert.equal(store.defs.write(s.id, first), true)
  assert.equal(store.defs.write(s.id, first), false)
  store.close()

  store = new Store({ home })
  try {
    const got = store.defs.get(s.id)
    assert.deepEqual(got?.snapshot, first)
    assert.equal(got?.updatedAt, 3000)
  } finally {
    store.close()
  }
})

test('defs.write still refuses what is not JSON, with the same error as before', () => {
  const store = openTempStore()
  const s = store.sessions.create({})
  assert.throws(
    () => store.defs.write(s.id, { items: [{ bad: Number.NaN }] }),
    (e: unknown) => isVisError(e, 'db.invalid-input') && /^defs\.put: /.test((e as Error).message),
  )
  assert.throws(
    () => store.defs.write(s.id, { when: new Date() }),
    (e: unknown) => isVisError(e, 'db.invalid-input'),
  )
  assert.throws(
    () => store.defs.write('ses_missing', { a: 1 }),
    (e: unknown) => isVisError(e, 'db.session-not-found'),
  )
  assert.equal(store.defs.get(s.id), undefined)
})

test('event appends validate on the fast path and report bad input by key path', () => {
  const store = openTempStore()
  const s = store.sessions.create({})
  const [a, b] = store.events.appendMany(s.id, [
    { type: 'block.started', data: { block_id: 'b1', code: 'x = 1', nested: [1, 'two', null, { t: true }] } },
    { type: 'note' },
  ])
  assert.deepEqual(a?.data, { block_id: 'b1', code: 'x = 1', nested: [1, 'two', null, { t: true }] })
  assert.equal(b?.data, null)
  assert.throws(
    () => store.events.append(s.id, { type: 'x', data: { n: Number.POSITIVE_INFINITY } }),
    (e: unknown) =>
      isVisError(e, 'db.invalid-input') && /events\.append\[0\]: data\.n/.test((e as Error).message),
  )
  assert.throws(
    () => store.events.append(s.id, { type: '', data: 1 }),
    (e: unknown) =>
      isVisError(e, 'db.invalid-input') && /events\.append\[0\]: type/.test((e as Error).message),
  )
  assert.throws(
    () => store.events.append(s.id, { type: 'x', data: new Map() as never }),
    (e: unknown) => isVisError(e, 'db.invalid-input'),
  )
  // Nothing invalid was stored: the two good events are all there is.
  assert.equal(store.events.lastSeq(s.id), 2)
})

test('a block without a turn or iteration writes no entry to their indexes, and lookups by a parent still use them', () => {
  const store = openTempStore()
  const s = store.sessions.create({})
  store.turns.start({ id: 'turn_a', sessionId: s.id })
  store.blocks.start({ sessionId: s.id, code: 'x = 1' })
  store.blocks.start({ sessionId: s.id, code: 'y = 2', turnId: 'turn_a' })
  const indexSql = (name: string) =>
    store.db.prepare('SELECT sql FROM sqlite_master WHERE name = ?').pluck().get(name) as string
  assert.match(indexSql('blocks_by_turn'), /WHERE turn_id IS NOT NULL$/)
  assert.match(indexSql('blocks_by_iteration'), /WHERE iteration_id IS NOT NULL$/)
  const plan = store.db
    .prepare('EXPLAIN QUERY PLAN SELECT * FROM blocks WHERE turn_id = ? ORDER BY position')
    .all('turn_a')
    .map((r) => (r as { detail: string }).detail)
    .join('\n')
  assert.match(plan, /USING INDEX blocks_by_turn/)
  assert.deepEqual(
    store.blocks.listByTurn('turn_a').map((b) => b.code),
    ['y = 2'],
  )
})

test('lazily writes without the per-commit fsync and restores full durability after, even when fn throws', () => {
  const store = openTempStore()
  const level = () => store.sqlite!.pragma('synchronous', { simple: true })
  assert.equal(level(), 2)
  assert.equal(
    store.lazily(() => level()),
    1,
  )
  assert.equal(level(), 2)
  assert.throws(
    () =>
      store.lazily(() => {
        throw new Error('boom')
      }),
    /boom/,
  )
  assert.equal(level(), 2)
})
