// ATTACK (surface 7, disk budget): the budget walk measures the roots by path, so whatever lies
// deeper than PATH_MAX (4096 bytes of path below the root) is never counted. A `shell()` command
// (which writes "through the kernel only": SECURITY.md says its bound is "the interrupt and the
// next block's refusal") makes a chain of 40 directories with 200-character names (about 8 KiB of
// path, built with relative `cd`s so no single call sees a long path) and writes 3 x 16 MiB at the
// bottom: 48 MiB against a 20 MiB budget. On the current code the block ends cleanly, the session
// measures ~0 growth, the next block's writes are still allowed, and the same trick repeats
// without bound (each file stays under the per-file cap): the host's disk fills.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import { python, tempHome } from '../sessions/helpers.js'

let rt: Runtime
const made: string[] = []
before(async () => {
  const { home } = tempHome('attack-disk-deep')
  rt = await createRuntime({ home, python, pool: { size: 0 } })
})
after(async () => {
  await rt.close()
  // GNU rm walks with fds; node's rmSync fails with ENAMETOOLONG below PATH_MAX.
  for (const d of made) execFileSync('rm', ['-rf', d])
})

// du walks with fds (fts), so it sees below PATH_MAX; the host's own view of what landed.
const duMiB = (dir: string) =>
  Number(execFileSync('du', ['-sk', dir], { encoding: 'utf8' }).split('\t')[0]) / 1024

test('files written deeper than PATH_MAX still count against the disk budget', async () => {
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-deep-'))
  made.push(root)
  const s = await rt.createSession({
    roots: [root],
    shell: true,
    limits: { diskBudgetMb: 20, wallClockMs: 60_000 },
  })
  try {
    const sh =
      "n=$(printf 'd%.0s' $(seq 200)); for i in $(seq 40); do mkdir $n && cd $n 2>/dev/null || exit 1; done; " +
      'for j in 1 2 3; do head -c 16M /dev/urandom > big$j; done; echo wrote'
    const r = await s.runBlock(`r = await shell(${JSON.stringify(sh)})\nprint(r['stdout'])`, {
      timeoutMs: 30_000,
    })
    const landed = duMiB(root)
    // Past the budget, all of it deeper than PATH_MAX (the budget may stop the block before
    // the whole 48 MiB landed: that is the fix working).
    assert.ok(
      landed > 20,
      `setup: expected more than the 20 MiB budget to land, du says ${landed.toFixed(1)} MiB (${JSON.stringify(r)})`,
    )
    // Give the between-block checks (every 250 ms) time to see it, polling a guest write each time.
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
      `the roots grew by ${landed.toFixed(1)} MiB (below PATH_MAX) against a 20 MiB budget and nothing noticed: ` +
        `first block error=${JSON.stringify(r.error ?? null)}, guest writes still allowed`,
    )
  } finally {
    await s.dispose()
  }
})
