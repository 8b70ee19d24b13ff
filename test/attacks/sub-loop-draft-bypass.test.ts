// ATTACK (surface 2, child loops, with drafts): a session in a draft sees its root through an
// overlay and writes only the draft; nothing lands in the real directory until a person reviews
// the diff and applies it. A sub_loop() child is a new session on the parent's roots BY PATH,
// started on the trunk: its worker binds the REAL root read-write. So a block of a drafted
// session writes the real workspace without review by asking a child to (the child's model
// follows the prompt the parent's block wrote). README lists "a parent working in a draft does not
// hand its child the draft" as not yet done; what it means (the draft's review is bypassed) is not
// stated anywhere, and SECURITY.md does not list it.
// Before the parent lent its draft to its children (m31), the child's file landed in the real root; it now lands in the draft.
import assert from 'node:assert/strict'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { pyCall } from '../agent/double.js'
import { harness } from '../agent/harness.js'

test('a sub_loop child of a session in a draft does not write the real root', async () => {
  const h = await harness({ config: { subLoops: { concurrency: 2, timeoutMs: 120_000, maxDepth: 2 } } })
  try {
    writeFileSync(join(h.root, 'keep.txt'), 'real\n')
    await h.engine.draft(h.sessionId).create('review me first')
    // The parent itself writes only the draft.
    const own = await h.engine.runBlock(h.sessionId, { code: "open('by-parent.txt', 'w').write('x')" })
    assert.equal(own.block.error, null, JSON.stringify(own.block))
    assert.equal(existsSync(join(h.root, 'by-parent.txt')), false)

    h.double.script([], (req) => {
      const b = JSON.stringify(req.body)
      if (b.includes('CHILD-TASK')) {
        if (b.includes('CHILD-' + 'WROTE')) return { text: 'done' }
        return {
          calls: [
            pyCall("open('by-child.txt', 'w').write('landed without review')\nprint('CHILD-' + 'WROTE')"),
          ],
        }
      }
      if (b.includes('PARENT-' + 'DONE')) return { text: 'parent done' }
      return {
        calls: [
          pyCall(
            "try:\n    print('PARENT-' + 'DONE', await sub_loop('CHILD-TASK: write by-child.txt'))\nexcept Exception as e:\n    print('PARENT-' + 'DONE refused', str(e)[:160])",
          ),
        ],
      }
    })
    const r = await h.agent.turn(h.sessionId, 'PARENT-TASK')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(
      existsSync(join(h.root, 'by-child.txt')),
      false,
      'the child of a drafted session wrote the real root, outside the draft a person reviews',
    )
  } finally {
    await h.close()
  }
})
