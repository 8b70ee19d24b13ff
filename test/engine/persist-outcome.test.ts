// persistFinish stores a block's outcome inside the block's atomic commit. A refused outcome
// (a defs snapshot that is not JSON) keeps the block, with the reason. Without attachments the
// snapshot is checked before anything is written (no savepoint needed); with attachments the
// snapshot is refused after the row and its attachments were written, so that write must be
// a real savepoint: without one the first row would stay and the retry collide with it.
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { persistFinish } from '../../src/engine/persist-outcome.js'
import { type Block, type FinishBlockInput, Store } from '../../src/persistence/index.js'
import { isVisError } from '../../src/util/errors.js'

const bad = { version: 1, items: [{ value: Number.NaN }] }
const good = { version: 1, items: [{ name: 'x', kind: 'const', source: 'x = 1' }] }
const png = { mediaType: 'image/png', name: 'a.png', data: Buffer.from('not really a png') }

function setup(unstored: boolean) {
  const store = new Store({ home: mkdtempSync(join(tmpdir(), 'vis-persist-outcome-')), databaseUrl: '' })
  after(() => store.close())
  const s = store.sessions.create()
  const block = (
    unstored
      ? { id: 'blk_one', sessionId: s.id, code: 'x = 1', createdAt: store.now() }
      : store.blocks.start({ id: 'blk_one', sessionId: s.id, code: 'x = 1' }).block
  ) as Block
  // As the engine calls it: inside the block's atomic commit (src/engine/execute.ts).
  const persist = (finish: FinishBlockInput, snapshot: unknown) =>
    store.transaction(() => persistFinish(store, block, finish, snapshot, unstored), { nested: 'atomic' })
  const rows = () => store.blocks.listBySession(s.id).map((b) => [b.id, b.position, b.status])
  return { store, s, persist, rows }
}

for (const unstored of [true, false]) {
  const kind = unstored ? 'deferred row' : 'stored row'

  test(`a snapshot that is not JSON keeps the block with the reason (${kind})`, () => {
    const { store, s, persist, rows } = setup(unstored)
    const stored = persist({ stdout: 'hi\n', durationMs: 3 }, bad)
    assert.equal(stored.status, 'done')
    assert.equal(stored.stdout, 'hi\n')
    assert.equal(stored.error?.code, 'block.persist-failed')
    assert.match(stored.error?.message ?? '', /^defs\.put: /)
    assert.equal(store.defs.get(s.id), undefined)
    assert.deepEqual(rows(), [['blk_one', 1, 'done']])
  })

  test(`with attachments, a refused snapshot is undone through a real savepoint (${kind})`, () => {
    const { store, s, persist, rows } = setup(unstored)
    const stored = persist({ stdout: 'hi\n', durationMs: 3, attachments: [png] }, bad)
    assert.equal(stored.error?.code, 'block.persist-failed')
    assert.deepEqual(store.attachments.listByBlock('blk_one'), [])
    assert.equal(store.defs.get(s.id), undefined)
    assert.deepEqual(rows(), [['blk_one', 1, 'done']])
  })

  test(`a good outcome stores the block, its attachments and its snapshot together (${kind})`, () => {
    const { store, s, persist, rows } = setup(unstored)
    const stored = persist({ stdout: 'hi\n', durationMs: 3, attachments: [png] }, good)
    assert.equal(stored.error, null)
    assert.equal(store.attachments.listByBlock('blk_one').length, 1)
    assert.deepEqual(store.defs.get(s.id)?.snapshot, good)
    assert.deepEqual(rows(), [['blk_one', 1, 'done']])
    const again = setup(unstored)
    again.persist({ durationMs: 1 }, good)
    assert.deepEqual(again.store.defs.get(again.s.id)?.snapshot, good)
  })

  test(`invalid outcome fields are refused with their own error, and nothing is stored (${kind})`, () => {
    const { persist, rows } = setup(unstored)
    assert.throws(
      () => persist({ durationMs: -1 }, good),
      (e: unknown) =>
        isVisError(e, 'db.invalid-input') && /^blocks\.finish: durationMs/.test((e as Error).message),
    )
    assert.deepEqual(rows(), unstored ? [] : [['blk_one', 1, 'running']])
  })
}

test('a block finished elsewhere: the database refusal aborts the whole commit', () => {
  const { store, s, persist, rows } = setup(false)
  store.blocks.finish('blk_one', { stdout: 'first', durationMs: 1 })
  assert.throws(
    () =>
      store.transaction(
        () => {
          store.events.append(s.id, { type: 'output', data: 'rolled back with it' })
          return persist({ durationMs: 2 }, good)
        },
        { nested: 'atomic' },
      ),
    (e: unknown) => isVisError(e, 'db.block-finished'),
  )
  assert.equal(store.events.lastSeq(s.id), 0)
  assert.equal(store.defs.get(s.id), undefined)
  assert.equal(store.blocks.require('blk_one').stdout, 'first')
  assert.deepEqual(rows(), [['blk_one', 1, 'done']])
})
