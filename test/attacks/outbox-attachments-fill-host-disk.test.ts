// ATTACK (surface 2, what the server keeps from what a sandbox wrote; SECURITY.md in scope:
// "exhausting the host's ... disk"): the seventh pass bounded a block's outbox (100 files, 64 MiB
// a block) so that one block cannot make the host read gigabytes. The bound is per BLOCK: what
// the engine stores of it goes into the vis home's database, which no session limit counts. The
// disk budget (limits.diskBudgetMb, default 1024 MiB) measures the roots and the outbox by
// allocated blocks, so sparse files (`truncate`) cost it nothing, and the outbox is emptied after
// each block anyway. A loop of blocks (a model's turn is one) therefore writes 64 MiB of the
// host's disk per block, for ever: 1000 blocks are 64 GB in ~/.vis, with the session's budget
// untouched.
// Here: 17 blocks each leave two sparse 32 MiB files in the outbox (nothing against the budget;
// 16 distinct bytes at each one's end, so no two are the same attachment); the engine stores
// 1088 MiB of attachments in the vis home, past the session's whole 1024 MiB
// budget, and no block is refused with session.disk-budget. It fails on the current code because
// every block is stored whole.
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { createEngine, type Engine } from '../../src/engine/index.js'
import { python } from '../sessions/helpers.js'

// Bytes allocated under a directory (what the host's disk lost to it).
function allocated(dir: string): number {
  let n = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) n += allocated(p)
    else if (e.isFile()) n += statSync(p).blocks * 512
  }
  return n
}

test("a session's outbox attachments cannot fill the host's disk past its disk budget", async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-outbox-disk-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-outbox-disk-root-'))
  const saved = process.env.VIS_HOME
  process.env.VIS_HOME = home
  let engine: Engine | undefined
  try {
    engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
    const s = await engine.createSession({ roots: [root] })
    const before = allocated(home)
    let stored = 0
    let refused = 0
    const code = [
      'import os',
      "ob = os.environ['VIS_OUTBOX']",
      "blk = globals().get('blk', 0) + 1",
      'for i in range(2):',
      "    with open(os.path.join(ob, f'z{i}.bin'), 'wb') as f:",
      '        f.truncate(32 << 20)',
      // A few distinct bytes at the end (one 4 KiB block): every file's content is its own.
      '        f.seek((32 << 20) - 16)',
      "        f.write(f'{blk:08d}-{i:07d}'.encode())",
      "print(sum(os.stat(os.path.join(ob, n)).st_blocks for n in os.listdir(ob) if n.endswith('.bin')) * 512)",
    ].join('\n')
    for (let i = 0; i < 17; i++) {
      const r: Awaited<ReturnType<Engine['runBlock']>> = await engine.runBlock(s.id, {
        code,
        timeout_ms: 120_000,
      })
      if ((r.block.error as { code?: string } | null)?.code === 'session.disk-budget') {
        refused++
        break
      }
      assert.equal(r.block.error, null, JSON.stringify(r.block.error))
      // The files cost the budget nothing.
      assert.ok(Number((r.block.stdout ?? '').split('\n')[0]) < 1 << 20, r.block.stdout ?? '')
      stored += (r.block.attachments ?? []).reduce((n, a) => n + (a.size ?? 0), 0)
    }
    const grew = allocated(home) - before
    const mib = (n: number) => Math.round(n / 2 ** 20)
    assert.ok(
      refused > 0 || grew <= 1024 * 2 ** 20,
      `the engine stored ${mib(stored)} MiB of one session's attachments (the vis home grew by ${mib(grew)} MiB), ` +
        "past the session's 1024 MiB disk budget, from outbox files that cost the budget nothing",
    )
  } finally {
    await engine?.close()
    if (saved === undefined) delete process.env.VIS_HOME
    else process.env.VIS_HOME = saved
    rmSync(home, { recursive: true, force: true })
    rmSync(root, { recursive: true, force: true })
  }
})
