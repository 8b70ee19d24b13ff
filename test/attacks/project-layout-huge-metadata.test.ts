// Attack (sixth outsider pass; README "sys.path starts with the import roots the project
// declares"; SECURITY.md in scope: "exhausting the host's memory"): a sandbox makes the host read a
// gigabyte it never paid for.
//
// At every worker start (src/engine/worker-start.ts → sandboxSysPath → src/project/declared.ts),
// the host runs the distribution's python3 UNCONFINED (execFile, no jail, no memory cgroup, no
// rlimit) over vis-guest/vis_ext/layout.py, which opens each root's pyproject.toml / setup.cfg /
// pytest.ini / tox.ini by path and reads it whole (`tomllib.load`, `cp.read_file`): no size cap, no
// "regular file beneath the root with no symlink" rule (the one AGENTS.md, templates and ignore
// files got: src/confinement/read-text.ts, at most 256 KiB / 1 MiB). The roots are the sandbox's to
// write. A block writes `pyproject.toml` as a SPARSE file of 1000 MiB (`truncate`): it allocates
// no block, so the disk budget counts nothing and RLIMIT_FSIZE allows it. The next worker start
// (a new session on the workspace, a `vis run` there, a draft, a replaced worker) makes the host's
// python read and decode it: about 2 GiB resident on the host per start (measured here: 2.1 GB
// max RSS, 9 s), and four such files and concurrent starts multiply it. (The same path-based open
// follows a symlink the sandbox plants to any host file the person can read.)
//
// Reproduction: a real engine session writes the sparse file; a second session on the same root
// runs a block (its worker start parses the layout); the test samples the parser process's peak
// resident memory (VmHWM in /proc) while it runs and requires it to stay under 256 MiB. It fails
// on the current code because the host's parser reaches gigabytes.
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'
import { python } from '../sessions/helpers.js'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

// The layout parser processes (python3 … layout.py) running now, with their VmHWM in KiB. Since
// the fix the parser gets the files' text on stdin (its command line names no root): in this test
// only this engine starts one.
function parsers(): Map<number, number> {
  const out = new Map<number, number>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0')
      if (!cmd.some((a) => a.endsWith('layout.py'))) continue
      const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${name}/status`, 'utf8'))
      out.set(Number(name), hwm ? Number(hwm[1]) : 0)
    } catch {
      // Gone between the listing and the read.
    }
  }
  return out
}

test("a sparse pyproject.toml in a root does not make the host's layout parser hold gigabytes", async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-layout-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-layout-root-'))
  made.push(home, root)
  process.env.VIS_HOME = home
  const engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    const a = await engine.createSession({ roots: [root] })
    const r = await engine.runBlock(a.id, {
      code: "f = open('pyproject.toml', 'wb'); f.truncate(1000 << 20); f.close(); print('planted')",
    })
    assert.equal(r.block.error, null, JSON.stringify(r.block))
    const st = statSync(join(root, 'pyproject.toml'))
    assert.equal(st.size, 1000 << 20)
    assert.ok(st.blocks * 512 < 1 << 20, 'sparse: it costs the disk budget nothing')

    // Another worker starts on the workspace; meanwhile, watch the host's parser.
    let peakKiB = 0
    let seen = false
    let running = true
    const watcher = (async () => {
      while (running) {
        for (const hwm of parsers().values()) {
          seen = true
          peakKiB = Math.max(peakKiB, hwm)
        }
        await new Promise((res) => setTimeout(res, 20))
      }
    })()
    const b = await engine.createSession({ roots: [root] })
    const r2 = await engine.runBlock(b.id, { code: 'print("second worker")' })
    running = false
    await watcher
    assert.equal(r2.block.error, null, JSON.stringify(r2.block))
    // Fixed: the host reads the metadata beneath the root, at most 256 KiB a file, so the sparse
    // gigabyte is skipped (a layout warning) and the parser, if it runs at all, gets only text.
    if (seen) assert.ok(peakKiB > 0, 'the parser was sampled')
    assert.ok(
      peakKiB < 256 * 1024,
      `the host's unconfined layout parser reached ${Math.round(peakKiB / 1024)} MiB resident reading ` +
        'a sparse pyproject.toml the sandbox wrote for free',
    )
  } finally {
    await engine.close()
  }
})
