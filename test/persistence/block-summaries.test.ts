// listSummaries (what GET /v1/sessions/{id} reads): the last blocks before a position, each cut in
// the database, on both backends.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { BACKENDS, openTempStore } from './helpers.js'

for (const backend of BACKENDS) {
  describe(backend, () => {
    test('the last blocks, oldest first, long fields cut and marked, with the count before them', () => {
      const store = openTempStore({}, backend)
      const s = store.sessions.create({ title: 'sum' })
      const ids: string[] = []
      for (let i = 0; i < 4; i++) {
        const { block } = store.blocks.start({ sessionId: s.id, code: `x = ${i}` })
        store.blocks.finish(block.id, {
          stdout: i === 2 ? 'o'.repeat(50) : `${i}\n`,
          value: i === 2 ? 'v'.repeat(50) : i,
          error: i === 3 ? { code: 'python.error', message: 'e'.repeat(50) } : undefined,
          durationMs: 1,
        })
        ids.push(block.id)
      }
      const last = store.blocks.listSummaries(s.id, { beforePosition: 1e9, limit: 3, maxChars: 20 })
      assert.deepEqual(
        last.blocks.map((b) => b.id),
        ids.slice(1),
      )
      assert.equal(last.before, 1)
      assert.deepEqual([...last.cut].sort(), [ids[2], ids[3]].sort())
      const [small, cut, failed] = last.blocks
      assert.equal(small!.stdout, '1\n')
      assert.equal(small!.value, 1)
      assert.equal(cut!.stdout, 'o'.repeat(20))
      assert.equal(cut!.value, null)
      assert.match(failed!.error!.message, /too long for the session view/)
      const first = store.blocks.listSummaries(s.id, {
        beforePosition: last.blocks[0]!.position,
        limit: 3,
        maxChars: 20,
      })
      assert.deepEqual(
        first.blocks.map((b) => b.id),
        ids.slice(0, 1),
      )
      assert.equal(first.before, 0)
      assert.equal(first.cut.size, 0)
    })
  })
}
