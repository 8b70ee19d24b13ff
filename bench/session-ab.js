#!/usr/bin/env node
// Two builds in ONE process, interleaved: `vis bench`'s three session figures (a session from
// the warm pool, a session with a cold worker, an idle session worker's RSS) against this
// checkout's dist/ and another's (--baseline DIR), alternating one sample of each per round so
// the shared machine's noise hits both alike. Each side's workers start from its own checkout
// (its dist/, vis-guest/, build/). Prints each side's p50s and the ratios. Reported, never
// asserted.
//
//   npm run build && node bench/session-ab.js --baseline /work/main [--rounds 12] [--this DIR]
//
// --this measures another checkout in place of this one (two older builds against each other).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'

const { values: args } = parseArgs({
  options: {
    baseline: { type: 'string' },
    this: { type: 'string', default: new URL('..', import.meta.url).pathname },
    rounds: { type: 'string', default: '12' },
  },
})
if (!args.baseline) {
  console.error(
    'usage: node bench/session-ab.js --baseline <checkout with a built dist/> [--rounds N] [--this DIR]',
  )
  process.exit(2)
}
const ROUNDS = Number(args.rounds)

// CPU time a process has used, in ms (utime + stime from /proc, clock ticks of 10 ms). Unlike
// the wall time it hardly moves with the machine's load: the cold start's bill in work.
const cpuMs = (pid) => {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(f[11]) + Number(f[12])) * 10
  } catch {
    return 0
  }
}

async function side(name, root) {
  const load = (file) => import(pathToFileURL(join(root, 'dist', file)).href)
  const { createRuntime } = await load('sessions/create-runtime.js')
  const { processTree, treeRssMb } = await load('worker/proctree.js')
  const home = mkdtempSync(join(tmpdir(), `vis-session-ab-${name}-`))
  const dir = mkdtempSync(join(tmpdir(), `vis-session-ab-root-${name}-`))
  const warmRt = await createRuntime({ home, pool: { size: 1 } })
  const coldRt = await createRuntime({ home, pool: { size: 0 } })
  // The first session warms the pool for this policy (and the JIT, for both paths).
  await (await warmRt.createSession({ roots: [dir] })).dispose()
  await (await coldRt.createSession({ roots: [dir] })).dispose()
  const warm = []
  const cold = []
  const rss = []
  const coldCpu = []
  return {
    name,
    warm,
    cold,
    rss,
    coldCpu,
    async round() {
      const h0 = process.cpuUsage()
      let t0 = performance.now()
      const c = await coldRt.createSession({ roots: [dir] })
      cold.push(performance.now() - t0)
      // The worker's processes so far and this host's share while it started.
      const h = process.cpuUsage(h0)
      coldCpu.push(processTree(c.pid).reduce((a, pid) => a + cpuMs(pid), 0) + (h.user + h.system) / 1000)
      await c.dispose()
      await warmRt.poolSettled()
      t0 = performance.now()
      const s = await warmRt.createSession({ roots: [dir] })
      warm.push(performance.now() - t0)
      await s.runBlock('n = 1')
      await new Promise((r) => setTimeout(r, 200))
      rss.push(treeRssMb(s.pid))
      await s.dispose()
    },
    async close() {
      await warmRt.close()
      await coldRt.close()
      rmSync(home, { recursive: true, force: true })
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

const p50 = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}
const sides = [await side('this', resolve(args.this)), await side('baseline', resolve(args.baseline))]
try {
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which side goes first, so neither always follows the other's refill.
    for (const s of r % 2 ? [...sides].reverse() : sides) await s.round()
  }
  const [a, b] = sides.map((s) => ({
    name: s.name,
    warm: p50(s.warm),
    cold: p50(s.cold),
    cpu: p50(s.coldCpu),
    rss: p50(s.rss),
  }))
  console.log(`session figures, ${ROUNDS} interleaved rounds (baseline ${args.baseline})`)
  for (const s of [a, b]) {
    console.log(
      `  ${s.name.padEnd(8)}  warm pool p50 ${s.warm.toFixed(2)} ms  cold worker p50 ${s.cold.toFixed(1)} ms (CPU ${s.cpu.toFixed(0)} ms)  idle RSS p50 ${s.rss.toFixed(1)} MB`,
    )
  }
  console.log(
    `  this ÷ baseline: warm ${(a.warm / b.warm).toFixed(2)}×  cold ${(a.cold / b.cold).toFixed(2)}× (CPU ${(a.cpu / b.cpu).toFixed(2)}×)  RSS ${(a.rss - b.rss).toFixed(1)} MB`,
  )
} finally {
  for (const s of sides) await s.close()
}
