// Attack (seventh outsider pass; SECURITY.md in scope: "exhausting the host's memory ... or disk"):
// the files a block closes in its worker's outbox (VIS_OUTBOX) are read by the ENGINE at the block's
// end and stored as attachments (src/engine/outbox-files.ts withOutboxBytes: each file up to 32 MiB,
// read whole into host memory, all of them held until the outcome is stored in the vis home's
// database). Only each file's size is bounded, never how many there are (vis_guest/attach.py collect()
// reports every new closed file), and the disk budget, which is what bounds the outbox, counts
// ALLOCATED blocks (st_blocks): a sparse file made with `truncate` costs nothing against it but reads
// as 32 MiB of zeros.
//
// So one block makes N sparse 32 MiB files in its outbox (no write, ~0 bytes of budget) and the host
// reads N × 32 MiB into its own memory and writes it into its database: N = 24 here is ~770 MB read
// and stored for free; N = 1000 (well under the open-files and inode limits, and a loop of blocks needs
// nothing more) is 32 GB, the host's memory and then its disk. The session's memory limit does not
// apply: the reading is the host's. A fix in the guest runtime alone is not enough: the record list is
// the guest's answer (a block may write its own frame on fd 3), so one 32 MiB file named 100 000 times
// in a forged outcome is the same attack without even making files; the engine must bound the count
// and the total itself.
//
// Reproduction: a real engine session makes 24 sparse 32 MiB files in its outbox; the test samples the
// host process's memory (rss) while the block ends, and sums the attachment bytes the engine stored.
// It fails on the current code because the host stored ~768 MiB for a block whose writes cost its disk
// budget nothing, and its memory grew by hundreds of MiB (a fix: count outbox attachments against a
// per-block total, e.g. the 6 MiB inline one or a stated outbox total, and/or charge a file's size, not
// its blocks, or refuse sparse outbox files).
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'
import { python } from '../sessions/helpers.js'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

test("sparse outbox files do not become the host's memory and database for free", async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-outbox-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-outbox-root-'))
  made.push(home, root)
  process.env.VIS_HOME = home
  const engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    const s = await engine.createSession({ roots: [root] })
    const w = await engine.runBlock(s.id, { code: "import os\nprint(bool(os.environ.get('VIS_OUTBOX')))" })
    assert.equal(w.block.stdout, 'True\n', 'the worker has an outbox')
    const base = process.memoryUsage().rss
    let peak = base
    let running = true
    const watcher = (async () => {
      while (running) {
        peak = Math.max(peak, process.memoryUsage().rss)
        await new Promise((res) => setTimeout(res, 5))
      }
    })()
    const r = await engine.runBlock(s.id, {
      code: [
        'import os',
        "ob = os.environ['VIS_OUTBOX']",
        'for i in range(24):',
        "    with open(os.path.join(ob, f'z{i:03d}.bin'), 'wb') as f:",
        '        f.truncate(32 << 20)',
        "print(sum(os.stat(os.path.join(ob, n)).st_blocks for n in os.listdir(ob) if n.endswith('.bin')) * 512)",
      ].join('\n'),
      timeout_ms: 120_000,
    })
    running = false
    await watcher
    assert.equal(r.block.error, null, JSON.stringify(r.block.error))
    // The block's own line; the engine's notes on the files it refused follow it.
    const allocated = Number((r.block.stdout ?? '').split('\n')[0])
    const stored = (r.block.attachments ?? []).reduce((n, a) => n + (a.size ?? 0), 0)
    const grew = Math.round((peak - base) / 2 ** 20)
    assert.ok(allocated < 1 << 20, `the files allocate ${allocated} bytes: nothing against the disk budget`)
    assert.ok(
      stored <= 64 * 2 ** 20 && grew < 256,
      `the host read and stored ${Math.round(stored / 2 ** 20)} MiB of attachments (its memory grew by ${grew} MiB) ` +
        `for one block whose outbox files allocate ${allocated} bytes; their number has no bound`,
    )
  } finally {
    await engine.close()
  }
})
