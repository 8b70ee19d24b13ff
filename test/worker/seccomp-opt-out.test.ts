// issue 37: the worker skips its in-process seccomp filter only where the kernel has none (qemu-user)
// and VIS_ALLOW_UNCONFINED accepted that missing layer. The opt-out for ANOTHER missing layer must
// not take seccomp with it: here bubblewrap is made missing, the opt-out is on, and every thread of
// the jailed helper still carries the filter (read from the host, /proc/<pid>/task/*/status).
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { probe } from '../../src/confinement/probe.js'
import { Worker } from '../../src/worker/worker.js'
import { normalizePolicy } from '../../src/worker/worker-policy.js'

const home = mkdtempSync(join(tmpdir(), 'vis-seccomp-opt-out-'))
const root = mkdtempSync(join(tmpdir(), 'vis-seccomp-opt-out-root-'))
const saved = { bwrap: process.env.VIS_BWRAP, allow: process.env.VIS_ALLOW_UNCONFINED }
after(() => {
  for (const [k, v] of [
    ['VIS_BWRAP', saved.bwrap],
    ['VIS_ALLOW_UNCONFINED', saved.allow],
  ] as const) {
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
  probe({ fresh: true })
  rmSync(home, { recursive: true, force: true })
  rmSync(root, { recursive: true, force: true })
})

const seccompModes = (pid: number) =>
  readdirSync(`/proc/${pid}/task`).map(
    (t) => /^Seccomp:\s*(\d)/m.exec(readFileSync(`/proc/${pid}/task/${t}/status`, 'utf8'))?.[1],
  )

test('with the opt-out covering a missing bubblewrap, the jailed helper still installs seccomp on every thread', async () => {
  process.env.VIS_BWRAP = '/nonexistent/bwrap'
  process.env.VIS_ALLOW_UNCONFINED = '1'
  const report = probe({ fresh: true })
  assert.equal(report.bubblewrap, null, 'control: bubblewrap is missing for this test')
  assert.equal(report.seccomp, true, 'this kernel offers seccomp')
  const w = await Worker.start({
    home,
    policy: normalizePolicy({ roots: [root] }),
    python: process.env.VIS_PYTHON_VERSION,
  })
  try {
    const r = (await w.call('exec', { code: 'x = 6 * 7' })) as { ok: boolean }
    assert.equal(r.ok, true, 'a block still runs')
    const modes = seccompModes(w.pid)
    assert.ok(modes.length > 1, `the helper has its threads: ${modes}`)
    assert.deepEqual(
      modes.filter((m) => m !== '2'),
      [],
      `every thread in seccomp filter mode (2): ${modes}`,
    )
  } finally {
    await w.close()
  }
})
