// Issue 15 §5: the engine skips rewriting a defs snapshot a block did not change; a reopened
// session must still get the defs of its latest block.
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'

const python = process.env.VIS_PYTHON_VERSION

test('blocks that leave the defs alone do not rewrite the snapshot, and a restart still restores them', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-engine-defs-'))
  process.env.VIS_HOME = home
  const e1 = await createEngine({ home, python, pool: { size: 0 } })
  let sid: string
  try {
    const s = await e1.createSession({})
    sid = s.id
    const r1 = await e1.runBlock(sid, { code: 'def sq(x):\n    return x * x\nK = 4' })
    assert.equal(r1.block.status, 'done', JSON.stringify(r1.block.error))
    const after1 = e1.store.defs.get(sid)
    assert.ok(after1, 'the first block stored a snapshot')
    const r2 = await e1.runBlock(sid, { code: 'print(sq(K))' })
    assert.equal(r2.block.stdout, '16\n')
    const after2 = e1.store.defs.get(sid)
    // Not rewritten: same text, same stamp (a rewrite stamps the time of the block).
    assert.deepEqual(after2, after1)
    const r3 = await e1.runBlock(sid, { code: 'def cube(x):\n    return x ** 3' })
    assert.equal(r3.block.status, 'done')
    const after3 = e1.store.defs.get(sid)
    assert.notDeepEqual(after3?.snapshot, after1.snapshot)
    await e1.runBlock(sid, { code: 'print(cube(2))' })
    assert.deepEqual(e1.store.defs.get(sid), after3)
  } finally {
    await e1.close()
  }

  const e2 = await createEngine({ home, python, pool: { size: 0 } })
  try {
    const again = await e2.runBlock(sid, { code: 'sq(K) + cube(2)' })
    assert.equal(again.block.result, 24, JSON.stringify(again.block.error))
  } finally {
    await e2.close()
  }
})
