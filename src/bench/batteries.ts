import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { findLocalPython } from '../distribution/discover.js'
import { readDistManifest } from '../distribution/manifest.js'
import { stageFromPython } from '../distribution/stage.js'
import { createRuntime } from '../sessions/create-runtime.js'
import { VisError } from '../util/errors.js'
import { treeCpuMs, treeRssMb } from '../worker/proctree.js'

// What a staged package set costs a session: cold start and idle memory with the set
// staged against the same interpreter staged without it (for the run), and the
// first import of the heavy packages inside a session. Each tree is measured in a child
// process of its own (the distribution is resolved once per process), alternating.

export type TreeFigures = {
  cold_create_p50_ms: number
  // The fastest start of the run. Under load it is no steadier than p50: one tree measured
  // against itself (--lean = --tree) gave 0.78-0.91x here, while CPU gave 0.99-1.01x.
  cold_create_min_ms: number
  // CPU time one start costs (p50): the host's own share plus the worker tree's, read when
  // the session is ready. The machine's load does not inflate it as it does wall time.
  cold_create_cpu_ms: number
  idle_session_rss_mb: number
  first_import_ms: Record<string, number>
  // The same imports' CPU time: what they cost on a loaded machine, where wall time also
  // counts the wait for a CPU.
  first_import_cpu_ms: Record<string, number>
}

const IMPORTS = ['numpy', 'pandas', 'matplotlib.pyplot', 'PIL.Image', 'requests']
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN
const round = (x: number) => Math.round(x * 10) / 10

// Runs in the child: VIS_PYTHON_HOME names the tree.
export async function measureTree(opts: { sessions: number; imports: boolean }): Promise<TreeFigures> {
  const home = mkdtempSync(join(tmpdir(), 'vis-bench-batteries-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-bench-batteries-root-'))
  const rt = await createRuntime({ home, pool: { size: 0 } })
  try {
    const cold: number[] = []
    const cpu: number[] = []
    const rss: number[] = []
    for (let i = 0; i < opts.sessions; i++) {
      const t0 = performance.now()
      const c0 = process.cpuUsage()
      const s = await rt.createSession({ roots: [root] })
      cold.push(performance.now() - t0)
      const host = process.cpuUsage(c0)
      cpu.push((host.user + host.system) / 1000 + treeCpuMs(s.pid))
      await s.runBlock('n = 1')
      await new Promise((r) => setTimeout(r, 200))
      rss.push(treeRssMb(s.pid))
      await s.dispose()
    }
    const first: Record<string, number> = {}
    const firstCpu: Record<string, number> = {}
    if (opts.imports) {
      for (const mod of IMPORTS) {
        const s = await rt.createSession({ roots: [root] })
        const r = await s.runBlock(
          `import time\n_t, _c = time.perf_counter(), time.process_time()\nimport ${mod}\nprint(round((time.perf_counter() - _t) * 1000, 1), round((time.process_time() - _c) * 1000, 1))`,
          { timeoutMs: 120_000 },
        )
        if (r.error) throw new Error(`import ${mod} failed: ${r.error.message}`)
        const [wall, cpu] = (r.stdout ?? '').trim().split(' ').map(Number)
        first[mod] = wall ?? Number.NaN
        firstCpu[mod] = cpu ?? Number.NaN
        await s.dispose()
      }
    }
    return {
      cold_create_p50_ms: round(median(cold)),
      cold_create_min_ms: round(Math.min(...cold)),
      cold_create_cpu_ms: round(median(cpu)),
      idle_session_rss_mb: round(median(rss)),
      first_import_ms: first,
      first_import_cpu_ms: firstCpu,
    }
  } finally {
    await rt.close()
    rmSync(home, { recursive: true, force: true })
    rmSync(root, { recursive: true, force: true })
  }
}

// The baseline: the same local CPython staged again without the set (pytest kept when the
// tree has it), into a temporary directory. A copy of the tree with the set deleted is not
// one: it measured slower than either, for reasons of its own.
async function stageLean(minor: string, withPytest: boolean): Promise<string> {
  const py = findLocalPython(minor)
  if (!py) {
    throw new VisError(
      'bench.batteries',
      `no local CPython ${minor} to stage the lean baseline from; give one with --lean DIR`,
      { minor },
    )
  }
  const out = mkdtempSync(join(tmpdir(), 'vis-bench-lean-'))
  return (await stageFromPython(py.executable, { out, withPytest, archive: false })).root
}

export type BatteriesResult = {
  packages: number
  lean: TreeFigures
  full: TreeFigures
  // Wall p50 (the figure), wall minimum, and CPU: on a loaded machine the first
  // swings with whatever else runs; the other two show what the set itself costs.
  cold_ratio: number
  cold_min_ratio: number
  cold_cpu_ratio: number
  idle_rss_ratio: number
}

// `lean`: a tree staged without the set to compare against; by default a copy of `full`
// without its packages and libraries is made for the run.
export async function measureBatteries(
  full: string,
  opts: { rounds?: number; sessions?: number; lean?: string } = {},
) {
  const m = readDistManifest(join(full, 'vis-dist.json'))
  const lean = opts.lean ?? (await stageLean(m.minor, (m.requested ?? []).includes('pytest')))
  // The built .js beside this file, or the .ts source when run through tsx.
  const js = fileURLToPath(new URL('./batteries-child.js', import.meta.url))
  const child = existsSync(js) ? js : js.replace(/\.js$/, '.ts')
  const runChild = (tree: string, imports: boolean): TreeFigures =>
    JSON.parse(
      execFileSync(
        process.execPath,
        [...process.execArgv, child, String(opts.sessions ?? 5), imports ? '1' : '0'],
        {
          env: { ...process.env, VIS_PYTHON_HOME: tree },
          encoding: 'utf8',
          maxBuffer: 16 << 20,
        },
      ),
    ) as TreeFigures
  try {
    const leans: TreeFigures[] = []
    const fulls: TreeFigures[] = []
    for (let r = 0; r < (opts.rounds ?? 5); r++) {
      // Which tree goes first swaps every round: a child starting while the previous
      // one's workers are still being torn down would otherwise always be the same tree.
      if (r % 2 === 0) {
        leans.push(runChild(lean, false))
        fulls.push(runChild(full, r === 0))
      } else {
        fulls.push(runChild(full, false))
        leans.push(runChild(lean, false))
      }
    }
    const pick = (xs: TreeFigures[]): TreeFigures => ({
      cold_create_p50_ms: median(xs.map((x) => x.cold_create_p50_ms)),
      cold_create_min_ms: Math.min(...xs.map((x) => x.cold_create_min_ms)),
      cold_create_cpu_ms: median(xs.map((x) => x.cold_create_cpu_ms)),
      idle_session_rss_mb: median(xs.map((x) => x.idle_session_rss_mb)),
      first_import_ms: xs[0]!.first_import_ms,
      first_import_cpu_ms: xs[0]!.first_import_cpu_ms,
    })
    const l = pick(leans)
    const f = pick(fulls)
    const ratio = (k: keyof Omit<TreeFigures, 'first_import_ms' | 'first_import_cpu_ms'>) =>
      Math.round((f[k] / l[k]) * 100) / 100
    return {
      packages: m.packages.length,
      lean: l,
      full: f,
      cold_ratio: ratio('cold_create_p50_ms'),
      cold_min_ratio: ratio('cold_create_min_ms'),
      cold_cpu_ratio: ratio('cold_create_cpu_ms'),
      idle_rss_ratio: ratio('idle_session_rss_mb'),
    } satisfies BatteriesResult
  } finally {
    if (!opts.lean) rmSync(join(lean, '..', '..', '..'), { recursive: true, force: true })
  }
}

export function formatBatteries(r: BatteriesResult): string {
  const lines = [
    `staged packages: ${r.packages}`,
    `cold session start, p50   lean ${r.lean.cold_create_p50_ms} ms   with set ${r.full.cold_create_p50_ms} ms   ratio ${r.cold_ratio}× (target ≤ 1.05)`,
    `cold session start, min   lean ${r.lean.cold_create_min_ms} ms   with set ${r.full.cold_create_min_ms} ms   ratio ${r.cold_min_ratio}×`,
    `cold session start, CPU   lean ${r.lean.cold_create_cpu_ms} ms   with set ${r.full.cold_create_cpu_ms} ms   ratio ${r.cold_cpu_ratio}× (host + worker tree; load-independent)`,
    `idle session RSS (tree)   lean ${r.lean.idle_session_rss_mb} MB   with set ${r.full.idle_session_rss_mb} MB   ratio ${r.idle_rss_ratio}× (target ≤ 1.05)`,
    'first import in a session:',
    ...Object.entries(r.full.first_import_ms).map(
      ([m, ms]) => `  ${m.padEnd(20)} ${ms} ms (CPU ${r.full.first_import_cpu_ms[m]} ms)`,
    ),
  ]
  return lines.join('\n')
}
