// A file the sandbox writes can grow between the host's fstat (the size it checks against its
// cap) and its read: every host read of such a file is bounded by the read itself (at most
// cap + 1 bytes through the fd), never by the size fstat gave. The test-only check/use hook
// pauses the host right after the fstat and grows the file there, through the draft's own
// overlay mount, as a block's thread would: the race lands every time.
import assert from 'node:assert/strict'
import { truncateSync, writeFileSync } from 'node:fs'
import { test } from 'node:test'
import { draftMountPid } from '../../src/confinement/draft-mount.js'
import { createEngine } from '../../src/engine/index.js'
import { setCheckUseHook } from '../../src/util/check-use-hook.js'
import { newHome, newRepo, python, run } from './helpers.js'

const CAP = 2 * 1024 * 1024
const BIG = 8 * 1024 * 1024

test('draft diff: a file grown past the cap between its fstat and its read is summarised, not read whole', async () => {
  const home = newHome()
  const root = newRepo()
  const e = await createEngine({ home, python, pool: { size: 0 } })
  try {
    const s = await e.createSession({ roots: [root] })
    await e.drafts.create(s.id, 'grow')
    await run(e, s.id, "open('edit.txt', 'w').write('small\\n')")
    const o = e.drafts.overlayFor(s.id)
    assert.ok(o)
    const view = `/proc/${await draftMountPid(o)}/root${root}`
    const state = { sides: 0, grown: 0 }
    setCheckUseHook((point, rel) => {
      if (rel !== 'edit.txt') return
      // The diff reads the real side, then the draft's.
      if (point === 'draft.diff.read') state.sides++
      // The draft's side of edit.txt, opened by the host and measured: now it grows.
      if (point !== 'beneath.opened' || state.sides !== 2 || state.grown > 0) return
      writeFileSync(`${view}/edit.txt`, `${'x'.repeat(79)}\n`.repeat(BIG / 80))
      state.grown++
    })
    let d: Awaited<ReturnType<typeof e.drafts.diff>>
    try {
      d = await e.drafts.diff(s.id)
    } finally {
      setCheckUseHook(undefined)
    }
    assert.equal(state.grown, 1, 'the file grew between the check and the read')
    assert.ok(d.diff.length < CAP, `the diff holds ${d.diff.length} characters: the host read past its cap`)
    assert.match(d.diff, /edit\.txt[\s\S]*text of more than 2097152 bytes, too large to show/)

    // Allowed: a file under the cap that does not grow is shown as text.
    truncateSync(`${view}/edit.txt`, 0)
    writeFileSync(`${view}/edit.txt`, 'small again\n')
    const ok = await e.drafts.diff(s.id)
    assert.match(ok.diff, /\+small again\n/)
  } finally {
    setCheckUseHook(undefined)
    await e.close()
  }
})
