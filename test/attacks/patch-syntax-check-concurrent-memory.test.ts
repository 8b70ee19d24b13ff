// Attack (seventh outsider pass; SECURITY.md in scope: "exhausting the host's memory"; the sixth
// pass's fix for patch's syntax check): the Python check of a .py file now runs under prlimit
// (`--as=256MiB --cpu=10`) and only for files up to 256 KiB, but that bounds ONE checker. Nothing
// bounds how many run at once: src/tools/fs/syntax.ts spawns a fresh unconfined host python3 for
// every patch, and a block may have 16 host calls running at once (ToolTable), each session its own
// 16, so one session makes the host hold 16 × (up to 256 MiB) = 4 GiB outside every jail and cgroup
// at the same time, and N sessions N times that, whatever the sessions' own `memoryMb` says.
//
// A 255 KiB list display of empty lists (`x = [[],[],…]`) costs CPython's compiler ~136 MiB here
// (under the 256 MiB bound, so the check "succeeds"). Reproduction: a real engine session (default
// limits) writes 16 such files and patches them with one `gather`; the test samples the host's
// checker processes (/proc, after prlimit's exec) and sums their resident memory at each sample. It
// fails on the current code because the host holds well over a GiB of checker memory at once for one
// block (a fix: one checker at a time per session, or a host-wide pool,
// or a shared memory bound such as a cgroup for all checkers).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sampledWhile, statusKiB, syntaxCheckers, withSession } from './host-syntax-checkers.js'

// Resident memory (KiB) of each host process running the syntax checker on one of our files.
function checkerRss(): number[] {
  return syntaxCheckers(/\/conc\d+\.py$/).map((c) => statusKiB(c.status, 'VmRSS'))
}

test("concurrent patches of .py files do not multiply the host's syntax-check memory", async () => {
  await withSession('patch-conc', async (engine, sid) => {
    const w = await engine.runBlock(sid, {
      code: [
        'for i in range(16):',
        "    open(f'conc{i}.py', 'w').write('x = [' + '[],' * 85_000 + ']\\n')",
        "print('ok')",
      ].join('\n'),
    })
    assert.equal(w.block.error, null, JSON.stringify(w.block.error))
    let peakKiB = 0
    let peakCount = 0
    const sample = () => {
      const rss = checkerRss()
      peakKiB = Math.max(
        peakKiB,
        rss.reduce((a, b) => a + b, 0),
      )
      peakCount = Math.max(peakCount, rss.length)
    }
    const r = await sampledWhile(sample, 5, () =>
      engine.runBlock(sid, {
        code: [
          "rs = await gather(*[patch([{'path': f'conc{i}.py', 'search': 'x = [', 'replace': 'y = ['}]) for i in range(16)])",
          "print(len(rs), [x['files'][0].get('syntax_unchecked') for x in rs][:2])",
        ].join('\n'),
        timeout_ms: 120_000,
      }),
    )
    assert.equal(r.block.error, null, JSON.stringify(r.block.error))
    assert.match(r.block.stdout ?? '', /^16 /)
    assert.ok(
      peakKiB < 256 * 1024,
      `the host held ${Math.round(peakKiB / 1024)} MiB in ${peakCount} concurrent unconfined syntax checkers at once ` +
        "from one session's single block, past the one-checker bound of 256 MiB SECURITY.md states (each checker's 256 MiB bound multiplies by the calls in flight)",
    )
  })
})
