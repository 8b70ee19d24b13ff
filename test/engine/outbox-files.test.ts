// Files a block closes in its worker's outbox reach engine sessions (HTTP, MCP, agent) as
// attachments, read by the host beneath the outbox's directory fd. Before, every one was dropped
// as "malformed" (the record names a path, the engine wanted bytes). The outbox is the sandbox's
// to change: a symlink there whose target path means one file in the jail and another on the
// host must never hand the host's file over.
import assert from 'node:assert/strict'
import { rmSync, symlinkSync, truncateSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import type { Engine } from '../../src/engine/index.js'
import { setCheckUseHook } from '../../src/util/check-use-hook.js'
import { engineForFile } from './file-engine.js'

// In the host's environment only: a worker's environment is scrubbed.
const MARKER = `HOST-ENV-SECRET-${process.pid}`
process.env.VIS_OUTBOX_TEST_SECRET = MARKER
let engine: Engine
const { root } = engineForFile('outbox', (e) => {
  engine = e
})

test('a file closed in the outbox is an attachment of the engine block, with its bytes', async () => {
  const s = await engine.createSession({ roots: [root] })
  const { block } = await engine.runBlock(s.id, {
    code: 'import os\nos.makedirs(os.path.join(VIS_OUTBOX, "sub"), exist_ok=True)\nopen(os.path.join(VIS_OUTBOX, "sub", "report.txt"), "w").write("made in the sandbox")\nprint("wrote")',
  })
  assert.equal(block.stdout, 'wrote\n')
  assert.deepEqual(
    block.attachments.map((a) => [a.name, a.media_type, a.size]),
    [['sub/report.txt', 'text/plain', 19]],
  )
  assert.equal(engine.attachment(s.id, block.attachments[0]!.id).data.toString(), 'made in the sandbox')
})

test("a file swapped for a symlink after the guest reported it is not followed: /proc/self/environ stays the worker's", async () => {
  const s = await engine.createSession({ roots: [root] })
  const outbox = (await engine.runtimeSession(s.id)).outbox
  // Between the guest's report and the host's read, the sandbox replaces the file with a link
  // whose target, followed by the host, is the host's own environment.
  setCheckUseHook((point, rel) => {
    if (point !== 'outbox.read') return
    rmSync(join(outbox, rel))
    symlinkSync('/proc/self/environ', join(outbox, rel))
  })
  try {
    const { block } = await engine.runBlock(s.id, {
      code: 'import os\nopen(os.path.join(VIS_OUTBOX, "env.txt"), "w").write("plain")\nprint("wrote")',
    })
    assert.equal(block.error, null, JSON.stringify(block.error))
    assert.equal(block.attachments.length, 0)
    assert.match(block.stdout, /env\.txt from the outbox was not kept: it was no longer a regular file/)
    assert.doesNotMatch(JSON.stringify(block), new RegExp(MARKER))
  } finally {
    setCheckUseHook(undefined)
  }
})

test('a file grown past 32 MiB between its size check and the read is not kept, and is never read past the cap', async () => {
  const s = await engine.createSession({ roots: [root] })
  const outbox = (await engine.runtimeSession(s.id)).outbox
  // The guest reports a small file; right after the host's fstat it grows (a thread the block
  // left behind could do that): 33 MiB, sparse, so the test costs no disk.
  let grown = 0
  setCheckUseHook((point, rel) => {
    if (point !== 'beneath.opened' || rel !== 'grow.bin') return
    truncateSync(join(outbox, rel), 33 << 20)
    grown++
  })
  try {
    const { block } = await engine.runBlock(s.id, {
      code: 'import os\nopen(os.path.join(VIS_OUTBOX, "grow.bin"), "wb").write(b"small")\nprint("wrote")',
    })
    assert.equal(grown, 1, 'the file grew between the check and the read')
    assert.equal(block.error, null, JSON.stringify(block.error))
    assert.equal(block.attachments.length, 0)
    assert.match(
      block.stdout,
      /grow\.bin from the outbox was not kept: it grew past 33554432 bytes while it was read/,
    )
  } finally {
    setCheckUseHook(undefined)
  }
})
