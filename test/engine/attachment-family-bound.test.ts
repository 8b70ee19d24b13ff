// A sub_loop child is a session of its own that a block makes at will, so the attachment bound
// (maxSessionAttachmentsMb) holds for a session's whole family: the top session and every child
// under it, at any depth, counted together (sessions.family_id, AttachmentsRepo.familyBytes),
// also after the engine restarts. A session outside the family keeps its own allowance. The
// attack through a real agent turn is test/attacks/attachment-bound-multiplied-by-sub-loops.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createEngine, type Engine } from '../../src/engine/index.js'

const home = mkdtempSync(join(tmpdir(), 'vis-attachment-family-home-'))
const root = mkdtempSync(join(tmpdir(), 'vis-attachment-family-root-'))
const engines: Engine[] = []
after(async () => {
  for (const e of engines) await e.close().catch(() => {})
  rmSync(home, { recursive: true, force: true })
  rmSync(root, { recursive: true, force: true })
})
const open = async () => {
  const e = await createEngine({
    home,
    python: process.env.VIS_PYTHON_VERSION,
    pool: { size: 0 },
    extensions: false,
    maxSessionAttachmentsMb: 1,
  })
  engines.push(e)
  return e
}

const KiB = 1024
const leave = (tag: string, size: number) =>
  `import os\nwith open(os.path.join(VIS_OUTBOX, "${tag}.bin"), "wb") as f:\n    f.truncate(${size})\nprint("left")`

test("a session's sub_loop children, grandchildren and the session itself share one attachment bound", async () => {
  let engine = await open()
  const kept = async (e: Engine, session: string, tag: string, size: number) => {
    const { block } = await e.runBlock(session, { code: leave(tag, size) })
    assert.equal(block.error, null, JSON.stringify(block.error))
    return { n: block.attachments.length, stdout: block.stdout }
  }
  const top = await engine.createSession({ roots: [root] })
  const child = await engine.createChildSession(top.id, { roots: [root] })
  const grandchild = await engine.createChildSession(child.id, { roots: [root] })

  // Allowed: within the bound, each keeps its file (256 KiB each, 768 KiB in the family).
  assert.equal((await kept(engine, top.id, 'top', 256 * KiB)).n, 1)
  assert.equal((await kept(engine, child.id, 'child', 256 * KiB)).n, 1)
  assert.equal((await kept(engine, grandchild.id, 'grand', 256 * KiB)).n, 1)

  // Past it, from any member: the grandchild (its own 256 KiB would fit a session of its own),
  // a second child of the top session, and the top session (its descendants count).
  const grand2 = await kept(engine, grandchild.id, 'grand2', 512 * KiB)
  assert.equal(grand2.n, 0)
  assert.match(grand2.stdout, /hold 768 KiB of the 1 MiB .*attachment\.session-limit/)
  const sibling = await engine.createChildSession(top.id, { roots: [root] })
  assert.equal((await kept(engine, sibling.id, 'sibling', 512 * KiB)).n, 0)
  assert.equal((await kept(engine, top.id, 'top2', 512 * KiB)).n, 0)

  // A session outside the family has its own allowance.
  const other = await engine.createSession({ roots: [root] })
  assert.equal((await kept(engine, other.id, 'other', 768 * KiB)).n, 1)

  // The family is stored: after a restart a child made before it still counts with the family.
  await engine.close()
  engines.pop()
  engine = await open()
  assert.equal((await kept(engine, child.id, 'after', 512 * KiB)).n, 0)
  assert.equal((await kept(engine, child.id, 'small', 128 * KiB)).n, 1)
})
