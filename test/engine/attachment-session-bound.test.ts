// A block keeps at most MAX_BLOCK_ATTACHMENTS attachments (the first ones; the rest noted with
// attachment.block-count-limit), whatever their bytes.
// A session's stored attachments are bounded in all (the engine's maxSessionAttachmentsMb, by the bytes stored:
// a sparse outbox file counts whole). Within the bound blocks keep their attachments; a block
// that would pass it keeps none of them (never a part) and says so with the code
// attachment.session-limit; a smaller block after it still fits. The attack is
// test/attacks/outbox-attachments-fill-host-disk.test.ts.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { DEFAULT_SESSION_ATTACHMENTS_MB, MAX_BLOCK_ATTACHMENTS } from '../../src/engine/attachment-budget.js'
import { createEngine, type Engine } from '../../src/engine/index.js'

const home = mkdtempSync(join(tmpdir(), 'vis-attachment-bound-home-'))
const root = mkdtempSync(join(tmpdir(), 'vis-attachment-bound-root-'))
let engine: Engine
before(async () => {
  engine = await createEngine({
    home,
    python: process.env.VIS_PYTHON_VERSION,
    pool: { size: 0 },
    extensions: false,
    maxSessionAttachmentsMb: 1,
  })
})
after(async () => {
  await engine?.close()
  rmSync(home, { recursive: true, force: true })
  rmSync(root, { recursive: true, force: true })
})

const KiB = 1024

// A block leaving files of these sizes in its outbox (sparse: they allocate nothing).
const leave = (tag: string, sizes: number[]) =>
  [
    'import os',
    ...sizes.map(
      (n, i) =>
        `with open(os.path.join(VIS_OUTBOX, "${tag}${i}.bin"), "wb") as f:\n    f.truncate(${n})\n    f.seek(${n - 8})\n    f.write(b"${tag}${i}".ljust(8, b"."))`,
    ),
    'print("left")',
  ].join('\n')

test('the default bound is 512 MiB', () => {
  assert.equal(DEFAULT_SESSION_ATTACHMENTS_MB, 512)
})

test("a session's attachments are kept up to the bound, and a block past it keeps none of its own", async () => {
  const s = await engine.createSession({ roots: [root] })
  const run = async (tag: string, sizes: number[]) => {
    const { block } = await engine.runBlock(s.id, { code: leave(tag, sizes) })
    assert.equal(block.error, null, JSON.stringify(block.error))
    return block
  }
  // Within the bound: kept whole (768 KiB of the 1 MiB).
  const first = await run('a', [512 * KiB, 256 * KiB])
  assert.deepEqual(
    first.attachments.map((a) => [a.name, a.size]),
    [
      ['a0.bin', 512 * KiB],
      ['a1.bin', 256 * KiB],
    ],
  )
  assert.doesNotMatch(first.stdout, /not kept/)
  assert.equal(engine.attachment(s.id, first.attachments[1]!.id).data.length, 256 * KiB)

  // Past it (768 + 128 + 256 KiB): nothing of the block is kept, though its first file would fit.
  const over = await run('b', [128 * KiB, 256 * KiB])
  assert.deepEqual(over.attachments, [])
  assert.match(
    over.stdout,
    /this block's 2 attachments \(384 KiB\) were not kept: the stored attachments of the session and its sub_loop family hold 768 KiB of the 1 MiB one session with its sub_loop children may keep \(256 KiB left; attachment\.session-limit\); attach less \(save large results under a root and name their paths\), continue in a new session, or have the operator raise the engine's maxSessionAttachmentsMb\]/,
  )

  // What still fits is kept: 256 KiB brings the session to exactly its bound (so nothing of the
  // refused block was stored).
  const fits = await run('c', [256 * KiB])
  assert.deepEqual(
    fits.attachments.map((a) => [a.name, a.size]),
    [['c0.bin', 256 * KiB]],
  )
  // And then even one byte more is refused.
  const full = await run('d', [8])
  assert.deepEqual(full.attachments, [])
  assert.match(full.stdout, /0 KiB left; attachment\.session-limit/)
  // Bytes a block attaches through vis_attach_bytes are stored too, so they are charged as well.
  const inline = await engine.runBlock(s.id, { code: 'vis_attach_bytes(b"hello", "note.txt")' })
  assert.deepEqual(inline.block.attachments, [])
  assert.match(inline.block.stdout, /this block's 1 attachment \(1 KiB\) was not kept/)
})

test('the bound is per session: another session starts with its own', async () => {
  const a = await engine.createSession({ roots: [root] })
  const b = await engine.createSession({ roots: [root] })
  const fill = await engine.runBlock(a.id, { code: leave('x', [1024 * KiB]) })
  assert.equal(fill.block.attachments.length, 1)
  const other = await engine.runBlock(b.id, { code: leave('y', [1024 * KiB]) })
  assert.equal(other.block.attachments.length, 1, other.block.stdout)
  const inline = await engine.runBlock(b.id, { code: 'vis_attach_bytes(b"hello", "note.txt")' })
  assert.deepEqual(inline.block.attachments, [])
})

test('one block keeps at most MAX_BLOCK_ATTACHMENTS, the first ones, and says how many it did not', async () => {
  const s = await engine.createSession({ roots: [root] })
  const made = MAX_BLOCK_ATTACHMENTS + 7
  const { block } = await engine.runBlock(s.id, {
    code: `for i in range(${made}):\n    vis_attach_bytes(b'z', f'z{i}.txt')\nprint('made')`,
  })
  assert.equal(block.error, null, JSON.stringify(block.error))
  assert.equal(block.attachments.length, MAX_BLOCK_ATTACHMENTS)
  assert.equal(block.attachments[0]!.name, 'z0.txt')
  assert.equal(block.attachments.at(-1)!.name, `z${MAX_BLOCK_ATTACHMENTS - 1}.txt`)
  assert.match(
    block.stdout,
    new RegExp(
      `made ${made} attachments; the first ${MAX_BLOCK_ATTACHMENTS} were kept and the other 7 not .*attachment\\.block-count-limit`,
    ),
  )
  // What was kept is stored and readable; exactly at the bound, nothing is said.
  assert.equal(engine.attachment(s.id, block.attachments[0]!.id).data.toString(), 'z')
  const atBound = await engine.runBlock(s.id, {
    code: `for i in range(${MAX_BLOCK_ATTACHMENTS}):\n    vis_attach_bytes(b'w', f'w{i}.txt')\nNone`,
  })
  assert.equal(atBound.block.attachments.length, MAX_BLOCK_ATTACHMENTS)
  assert.doesNotMatch(atBound.block.stdout, /block-count-limit/)
})
