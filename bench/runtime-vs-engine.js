#!/usr/bin/env node
// A trivial block's round trip through the plain path (createRuntime → createSession → runBlock)
// against the engine's (createEngine → createSession → runBlock), in one process, rounds
// alternating so machine noise falls on every path alike (issue 35 §4). Reported, never asserted.
//
//   npm run build && node bench/runtime-vs-engine.js [--iterations N] [--python 3.12] [--json]
//       [--baseline OLD/dist] [--runtime-only]
//
// --baseline: another build's dist/ (a git worktree of main, built): its createRuntime runs in the
// same rounds and is the base every ratio is taken against, so the first ratio is this build's
// createRuntime (a facade over the engine's transient sessions) over the previous one (issue 35's
// 5% rule). --runtime-only leaves the engine's paths with history out.
//
// The engine is measured three ways: its default store (SQLite, synchronous=FULL: an fsync of the
// WAL before each block is acknowledged), durability 'normal' (no fsync per commit), and the
// default store with its database file on tmpfs (home/vis.db a link into /dev/shm; the home
// itself stays on disk, as the jail mounts its outbox), where the writes stay but reach no
// disk: the engine takes no in-memory store (its SQLite must be in WAL mode, which an in-memory
// database is not), so this is the nearest to an engine with no durable writes on the hot path.
// Each ratio is the engine path's p50 over the plain path's p50 from the same rounds; beside it
// the host process's CPU per block (user + system, this process only: the worker's share is the
// same on every path), which a loaded machine disturbs less than the wall clock.
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const built = (file) => {
  const url = new URL(`../dist/${file}`, import.meta.url)
  if (!existsSync(url)) {
    console.error('bench/runtime-vs-engine.js needs the built package: run `npm run build` first')
    process.exit(2)
  }
  return import(url.href)
}
const { createRuntime } = await built('sessions/create-runtime.js')
const { createEngine } = await built('engine/engine.js')

const argv = process.argv.slice(2)
const opt = (name) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}
const baselineDir = opt('--baseline')
const baseline = baselineDir
  ? await import(pathToFileURL(join(resolve(baselineDir), 'sessions/create-runtime.js')).href)
  : undefined
const n = Number(opt('--iterations') ?? 1000)
const python = opt('--python')
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]
}
const temp = (base, name) => mkdtempSync(join(base, `vis-bench-rve-${name}-`))
const made = []
const dir = (base, name) => {
  const d = temp(base, name)
  made.push(d)
  return d
}
const shm = existsSync('/dev/shm') ? '/dev/shm' : undefined

const paths = []
const closers = []
try {
  const root = dir(tmpdir(), 'root')
  const runtimes = [
    { name: baseline ? 'createRuntime (this build, on the engine)' : 'createRuntime', create: createRuntime },
  ]
  if (baseline)
    runtimes.unshift({ name: `createRuntime (baseline ${baselineDir})`, create: baseline.createRuntime })
  for (const r of runtimes) {
    const rt = await r.create({ home: dir(tmpdir(), 'runtime'), python, pool: { size: 0 } })
    closers.push(() => rt.close())
    const s = await rt.createSession({ roots: [root] })
    paths.push({
      name: r.name,
      run: async (code) => {
        const out = await s.runBlock(code)
        if (out.error) throw new Error(`the block failed: ${JSON.stringify(out.error)}`)
      },
    })
  }
  const engines = argv.includes('--runtime-only')
    ? []
    : [
        { name: 'createEngine (default store, synchronous=FULL)', home: dir(tmpdir(), 'engine-full') },
        {
          name: "createEngine (durability 'normal')",
          home: dir(tmpdir(), 'engine-normal'),
          durability: 'normal',
        },
      ]
  if (shm && !argv.includes('--runtime-only')) {
    const home = dir(tmpdir(), 'engine-tmpfs')
    symlinkSync(join(dir(shm, 'engine-db'), 'vis.db'), join(home, 'vis.db'))
    engines.push({ name: 'createEngine (default store, vis.db on tmpfs)', home })
  }
  for (const e of engines) {
    const engine = await createEngine({
      home: e.home,
      python,
      pool: { size: 0 },
      extensions: false,
      mcpServers: {},
      ...(e.durability ? { durability: e.durability } : {}),
    })
    closers.push(() => engine.close())
    const { id } = await engine.createSession({ roots: [root] })
    paths.push({
      name: e.name,
      run: async (code) => {
        const { block } = await engine.runBlock(id, { code })
        if (block.status !== 'done')
          throw new Error(`the block ended ${block.status}: ${JSON.stringify(block.error)}`)
      },
    })
  }
  for (const p of paths) {
    p.times = []
    p.cpu = 0
  }
  // Warm every path: workers started, the guest's code cache and the store's statements ready.
  for (let i = 0; i < 200; i++) for (const p of paths) await p.run('x = 1')
  for (let i = 0; i < n; i++) {
    // The order rotates each round, so no path always runs right after another.
    for (let k = 0; k < paths.length; k++) {
      const p = paths[(i + k) % paths.length]
      const c = process.cpuUsage()
      const t = process.hrtime.bigint()
      await p.run('x = 1')
      p.times.push(Number(process.hrtime.bigint() - t) / 1000)
      const used = process.cpuUsage(c)
      p.cpu += used.user + used.system
    }
  }
  const r = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d
  const base = quantile(paths[0].times, 0.5)
  const result = {
    iterations: n,
    paths: paths.map((p) => ({
      name: p.name,
      p50_us: r(quantile(p.times, 0.5)),
      p99_us: r(quantile(p.times, 0.99)),
      ratio_p50: r(quantile(p.times, 0.5) / base, 2),
      host_cpu_us: r(p.cpu / n),
      cpu_ratio: r(p.cpu / paths[0].cpu, 2),
    })),
  }
  if (argv.includes('--json')) console.log(JSON.stringify(result))
  else {
    console.log(
      `runBlock('x = 1'), ${n} rounds alternating between ${paths.length} paths (ratios against the first)`,
    )
    for (const p of result.paths) {
      console.log(
        `${p.name.padEnd(48)} p50 ${p.p50_us} µs (${p.ratio_p50}×)  p99 ${p.p99_us} µs  host CPU ${p.host_cpu_us} µs/block (${p.cpu_ratio}×)`,
      )
    }
  }
} finally {
  for (const close of closers.reverse()) await close().catch(() => {})
  for (const d of made) rmSync(d, { recursive: true, force: true })
}
