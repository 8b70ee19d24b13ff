// What one block's outbox may hand the host (src/engine/outbox-files.ts): at most 100 files and
// 64 MiB in all by apparent size (a sparse file counts whole), each file once. Past a bound the
// engine opens nothing more and says so, with the code attachment.outbox-limit; what is within
// the bounds is kept as before. The attack is test/attacks/outbox-sparse-files-host-memory.test.ts.
import assert from 'node:assert/strict'
import { linkSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { finishFromOutcome } from '../../src/engine/block-finish.js'
import type { Engine } from '../../src/engine/index.js'
import { MAX_OUTBOX_FILES, MAX_OUTBOX_TOTAL_BYTES, withOutboxBytes } from '../../src/engine/outbox-files.js'
import type { BlockResult } from '../../src/sessions/block-result.js'
import { engineForFile } from './file-engine.js'

let engine: Engine
const { root } = engineForFile('outbox-bounds', (e) => {
  engine = e
})

const notes = (stdout: string) => [...stdout.matchAll(/from the outbox was not kept/g)].length

test('past the file count: the first 100 are kept, one note names the rest and the code', async () => {
  const s = await engine.createSession({ roots: [root] })
  const { block } = await engine.runBlock(s.id, {
    code: `import os
for i in range(${MAX_OUTBOX_FILES + 5}):
    open(os.path.join(VIS_OUTBOX, f"f{i:03d}.txt"), "w").write(f"file {i}")
print("wrote")`,
  })
  assert.equal(block.error, null, JSON.stringify(block.error))
  assert.equal(block.attachments.length, MAX_OUTBOX_FILES)
  assert.equal(block.attachments[0]!.name, 'f000.txt')
  assert.equal(engine.attachment(s.id, block.attachments[99]!.id).data.toString(), 'file 99')
  assert.match(
    block.stdout,
    /f100\.txt from the outbox was not kept: a block hands over at most 100 outbox files \(attachment\.outbox-limit\), so neither it nor the 4 after it were read/,
  )
  assert.equal(notes(block.stdout), 1)
})

test('past the total by apparent size: a sparse file counts whole; a small file after it still fits', async () => {
  const s = await engine.createSession({ roots: [root] })
  const { block } = await engine.runBlock(s.id, {
    code: `import os
for n in ("a.bin", "b.bin", "c.bin"):
    with open(os.path.join(VIS_OUTBOX, n), "wb") as f:
        f.truncate(30 << 20)
open(os.path.join(VIS_OUTBOX, "d.txt"), "w").write("small")
print("wrote")`,
  })
  assert.equal(block.error, null, JSON.stringify(block.error))
  assert.deepEqual(
    block.attachments.map((a) => [a.name, a.size]),
    [
      ['a.bin', 30 << 20],
      ['b.bin', 30 << 20],
      ['d.txt', 5],
    ],
  )
  assert.match(
    block.stdout,
    new RegExp(
      `c\\.bin from the outbox was not kept: it is ${30 << 20} bytes \\(apparent size\\), past the ${MAX_OUTBOX_TOTAL_BYTES} bytes one block's outbox files may hold in all \\(${MAX_OUTBOX_TOTAL_BYTES - (60 << 20)} left; attachment\\.outbox-limit\\)`,
    ),
  )
})

test('a forged report naming one file 100 000 times (and by other names) hands it over once', async () => {
  // The record list is the guest's answer, which a block can forge (its own frame on fd 3): the
  // engine's reader gets such a list directly here, over a real outbox directory.
  const outbox = mkdtempSync(join(tmpdir(), 'vis-outbox-bounds-forged-'))
  try {
    writeFileSync(join(outbox, 'one.bin'), Buffer.alloc(1000, 120))
    linkSync(join(outbox, 'one.bin'), join(outbox, 'alias.bin'))
    const rec = (name: string) => ({
      name,
      media_type: 'application/octet-stream',
      size: 1000,
      path: join(outbox, name),
    })
    const forged = [
      rec('one.bin'),
      rec('./one.bin'),
      rec('alias.bin'),
      ...Array(100_000).fill(rec('one.bin')),
    ]
    const outcome = await withOutboxBytes({ stdout: 'forged\n', attachments: forged } as BlockResult, outbox)
    const finish = finishFromOutcome(outcome, 1, { maxOutputChars: 1 << 20 })
    assert.deepEqual(
      finish.attachments?.map((a) => [a.name, a.data.length]),
      [['one.bin', 1000]],
    )
    const stdout = finish.stdout ?? ''
    assert.match(
      stdout,
      /\.\/one\.bin from the outbox was not kept: it is a file this block already handed over \(attachment\.outbox-limit\)/,
    )
    assert.match(
      stdout,
      /alias\.bin from the outbox was not kept: it is a file this block already handed over/,
    )
    assert.match(
      stdout,
      /one\.bin from the outbox was not kept: it was handed over twice in one block \(attachment\.outbox-limit\)/,
    )
    assert.match(stdout, /neither it nor the 99902 after it were read/)
    // One note per record up to the count, then one for the rest: bounded, whatever the list.
    assert.equal(notes(stdout), MAX_OUTBOX_FILES)
  } finally {
    rmSync(outbox, { recursive: true, force: true })
  }
})
