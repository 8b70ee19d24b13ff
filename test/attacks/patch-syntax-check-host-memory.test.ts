// Attack (sixth outsider pass; SECURITY.md in scope: "exhausting the host's memory"): `patch` on a
// .py file makes the HOST compile sandbox-written source in an unconfined python3, with no memory
// bound and no timeout.
//
// src/tools/fs/patch.ts checks that an edit keeps a .py file parsing: parseError() →
// src/tools/fs/syntax.ts spawns the distribution's python3 on the host (no jail, no cgroup, no
// rlimit, no deadline) and `compile()`s the file's ORIGINAL text and then the patched text, both
// written by the sandbox and read up to patch's 32 MiB cap. CPython's compiler needs about 360
// bytes of memory per byte of a list display (`x=[1,1,1,…]`): measured here, 1 MB of source →
// 358 MB resident, 16 MiB → 5.6 GB and 37 s. So a block writes a 32 MiB .py file (32 MiB of a
// 1024 MiB disk budget) and calls `patch` on it once: the host spends >11 GB on the check; two
// concurrent calls exhaust a 24 GB machine. The block's own memory limit (memoryMb) does not
// apply: the compile runs outside every jail.
//
// Reproduction (kept small so the test machine survives): a real engine session writes a 2 MB
// list display to big.py and calls patch on it from a block; the test samples the host checker
// process's peak resident memory (VmHWM) and requires it to stay under 256 MiB. It fails on the
// current code because the host's checker takes ~700 MiB for 2 MB of source.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sampledWhile, statusKiB, syntaxCheckers, withSession } from './host-syntax-checkers.js'

// Host processes running the syntax checker (Python, after any exec) on a file named big.py or
// mid.py: their name, VmHWM (KiB) and RLIMIT_AS soft limit as /proc shows it.
type Seen = { file: string; hwmKiB: number; asLimit: string }
function checkers(): Seen[] {
  return syntaxCheckers(/(big|mid)\.py$/).map((c) => {
    const as = /Max address space\s+(\S+)/.exec(c.limits)
    return { file: c.file, hwmKiB: statusKiB(c.status, 'VmHWM'), asLimit: as ? as[1]! : '?' }
  })
}

test("patch's syntax check of a sandbox-written .py file does not take the host's memory", async () => {
  await withSession('patch-mem', async (engine, sid) => {
    const seen: Seen[] = []
    const r = await sampledWhile(
      () => seen.push(...checkers()),
      20,
      () =>
        engine.runBlock(sid, {
          code: [
            "open('big.py', 'w').write('x = [' + '1,' * 1_000_000 + ']\\n')",
            "r = await patch([{'path': 'big.py', 'search': 'x = [', 'replace': 'y = ['}])",
            "print('big', r['files'][0].get('syntax_unchecked'))",
            // Under the cap the check still runs (and still refuses a broken edit).
            "open('mid.py', 'w').write('x = [' + '1,' * 90_000 + ']\\n')",
            'try:',
            "    await patch([{'path': 'mid.py', 'search': 'x = [', 'replace': 'x = (['}])",
            'except Exception as e:',
            "    print('mid refused:', type(e).__name__, str(e)[:60])",
          ].join('\n'),
          timeout_ms: 120_000,
        }),
    )
    assert.equal(r.block.error, null, JSON.stringify(r.block.error))
    const stdout = r.block.stdout
    assert.equal(
      seen.filter((c) => c.file.endsWith('big.py')).length,
      0,
      'the host ran its python syntax checker over a 2 MB sandbox-written file',
    )
    assert.match(stdout, /big the file is \d+ bytes, over the 262144-byte limit for syntax checks/)
    assert.match(stdout, /mid refused: .*stop parsing/)
    const mid = seen.filter((c) => c.file.endsWith('mid.py'))
    assert.ok(mid.length > 0, 'the host ran its python syntax checker over mid.py (under the cap)')
    for (const c of mid) {
      assert.equal(c.asLimit, String(256 * 1024 * 1024), 'the checker runs under an RLIMIT_AS bound')
      assert.ok(
        c.hwmKiB < 256 * 1024,
        `the host's syntax checker reached ${Math.round(c.hwmKiB / 1024)} MiB resident`,
      )
    }
  })
})
