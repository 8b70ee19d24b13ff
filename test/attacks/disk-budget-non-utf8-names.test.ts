// ATTACK (surface 7, disk budget): the budget walk lists directories as text, so a name that is
// not valid UTF-8 comes back with U+FFFD in it and the lstat of that re-encoded name misses the
// real file: the file is never counted. Plain guest Python (no shell, nothing the audit hook
// refuses: byte paths are ordinary opens inside the root) writes 3 x 16 MiB files named
// b'big\xff<n>' against a 20 MiB budget. On the current code the block ends cleanly, the session
// measures ~4 KiB of growth, later writes are still allowed, and it repeats without bound (each
// file under the per-file cap): the host's disk fills.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import { python, tempHome } from '../sessions/helpers.js'

let rt: Runtime
const made: string[] = []
before(async () => {
  const { home } = tempHome('attack-disk-nonutf8')
  rt = await createRuntime({ home, python, pool: { size: 0 } })
})
after(async () => {
  await rt.close()
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

const duMiB = (dir: string) =>
  Number(execFileSync('du', ['-sk', dir], { encoding: 'utf8' }).split('\t')[0]) / 1024

test('files whose names are not UTF-8 still count against the disk budget', async () => {
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-nonutf8-'))
  made.push(root)
  const s = await rt.createSession({ roots: [root], limits: { diskBudgetMb: 20, wallClockMs: 60_000 } })
  try {
    const r = await s.runBlock(
      `import os
for j in range(3):
    with open(${JSON.stringify(root)}.encode() + b'/big\\xff' + str(j).encode(), 'wb') as f:
        for k in range(16):
            f.write(b'x' * (1 << 20))
print('wrote')`,
      { timeoutMs: 30_000 },
    )
    const landed = duMiB(root)
    assert.ok(
      landed >= 40,
      `setup: expected ~48 MiB to land, du says ${landed.toFixed(1)} MiB (${JSON.stringify(r)})`,
    )
    let refused = r.error?.phase === 'disk-budget'
    const until = Date.now() + 5_000
    while (!refused && Date.now() < until) {
      const w = await s.runBlock(`open(${JSON.stringify(`${root}/probe`)}, 'w').write('y')`, {
        timeoutMs: 10_000,
      })
      refused = w.error?.phase === 'disk-budget' || /disk budget/.test(w.error?.message ?? '')
      if (!refused) await new Promise((res) => setTimeout(res, 250))
    }
    assert.ok(
      refused,
      `the roots grew by ${landed.toFixed(1)} MiB (non-UTF-8 names) against a 20 MiB budget and nothing noticed: ` +
        `first block error=${JSON.stringify(r.error ?? null)}, guest writes still allowed`,
    )
  } finally {
    await s.dispose()
  }
})
