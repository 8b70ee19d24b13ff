// persistFinish catches a refused outcome (here a defs snapshot that is not JSON, refused after
// the block's row was written) and stores the block with the reason instead. Inside the
// block's atomic transaction its write must still be a real savepoint: without one the first
// row would stay and the retry would collide with it (db.block-exists).
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { persistFinish } from '../../src/engine/persist-outcome.js'
import { Store } from '../../src/persistence/index.js'

const bad = { version: 1, items: [{ value: Number.NaN }] }

for (const unstored of [true, false]) {
  test(`a refused snapshot in the atomic finish keeps the block with the reason (${unstored ? 'deferred row' : 'stored row'})`, () => {
    const store = new Store({ home: mkdtempSync(join(tmpdir(), 'vis-persist-outcome-')), databaseUrl: '' })
    after(() => store.close())
    const s = store.sessions.create()
    const block = unstored
      ? { id: 'blk_one', sessionId: s.id, code: 'x = 1', createdAt: store.now() }
      : store.blocks.start({ id: 'blk_one', sessionId: s.id, code: 'x = 1' }).block
    const stored = store.transaction(
      () =>
        persistFinish(
          store,
          block as Parameters<typeof persistFinish>[1],
          { stdout: 'hi\n', durationMs: 3 },
          bad,
          unstored,
        ),
      { nested: 'atomic' },
    )
    assert.equal(stored.id, 'blk_one')
    assert.equal(stored.status, 'done')
    assert.equal(stored.stdout, 'hi\n')
    assert.equal(stored.error?.code, 'block.persist-failed')
    assert.match(stored.error?.message ?? '', /^defs\.put: /)
    assert.equal(store.defs.get(s.id), undefined)
    assert.deepEqual(
      store.blocks.listBySession(s.id).map((b) => [b.id, b.position, b.status]),
      [['blk_one', 1, 'done']],
    )
  })
}
