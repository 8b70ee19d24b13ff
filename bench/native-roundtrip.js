// In-process round trips through the native core, beside the same run's bare
// thread-safe-function ping (JS -> native thread -> JS, no Python).
//   node --import tsx bench/native-roundtrip.js [--n 3000]
// Prints p50/p99 in µs and each figure's ratio to the ping's p50. Reports, never asserts.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadLoader } from '../src/native/addon.js'
import { loadPython } from '../src/native/index.js'

const nArg = process.argv.indexOf('--n')
const N = nArg > 0 ? Number(process.argv[nArg + 1]) : 3000
const WARMUP = Math.min(300, Math.floor(N / 10))
process.env.VIS_HOME ??= mkdtempSync(join(tmpdir(), 'vis-bench-'))

function stats(samplesNs) {
  const s = [...samplesNs].sort((a, b) => a - b)
  const pick = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))] / 1000
  return { p50: pick(0.5), p99: pick(0.99) }
}

async function timeLoop(n, once) {
  const out = []
  for (let i = 0; i < n + WARMUP; i++) {
    const t0 = process.hrtime.bigint()
    await once()
    const dt = Number(process.hrtime.bigint() - t0)
    if (i >= WARMUP) out.push(dt)
  }
  return out
}

const t0 = performance.now()
const rt = await loadPython()
const startMs = performance.now() - t0
const loader = loadLoader()

// The ping's thread-safe function is unref'd; this keeps the loop alive meanwhile.
const keepAlive = setInterval(() => {}, 1000)
let pong = null
loader.pingStart(() => pong?.())
const ping = () =>
  new Promise((resolve) => {
    pong = resolve
    loader.ping()
  })

const rows = []
rows.push(['tsfn ping (no Python)', stats(await timeLoop(N, ping))])
rows.push(['exec("x = 1")', stats(await timeLoop(N, () => rt.exec('x = 1')))])
rows.push(['eval("x")', stats(await timeLoop(N, () => rt.eval('x')))])

// A host call measured from Python: _vis.host_call -> JS handler -> reply -> Python.
rt.onHostCall(async () => '{"ok":true,"value":1}')
await rt.exec(
  'import _vis, time\ndef _vis_bench(n):\n    out = []\n    for _ in range(n):\n        t0 = time.perf_counter_ns()\n        _vis.host_call("bench", "[]")\n        out.append(time.perf_counter_ns() - t0)\n    return out',
  { filename: '<bench>' },
)
const hc = await rt.eval(`_vis_bench(${N + WARMUP})`)
rows.push(['host call from Python', stats(hc.ok ? hc.value.slice(WARMUP) : [0])])

// Interrupt of a busy loop: from interrupt() to the KeyboardInterrupt outcome in JS.
const landings = []
rt.onOutput(() => {})
for (let i = 0; i < 60; i++) {
  const p = rt.exec('import sys\nsys.stdout.write("go")\nsys.stdout.flush()\nwhile True:\n    pass')
  await new Promise((r) => setTimeout(r, 3))
  const t = process.hrtime.bigint()
  rt.interrupt(p.job)
  await p
  landings.push(Number(process.hrtime.bigint() - t))
}
rows.push(['interrupt busy loop', stats(landings.slice(10))])

const base = rows[0][1].p50
console.log(
  `native round trips, Python ${rt.version}, n=${N} (after ${WARMUP} warm-up), µs; loadPython() ${startMs.toFixed(1)} ms`,
)
console.log(`${'what'.padEnd(24)} ${'p50'.padStart(8)} ${'p99'.padStart(8)} ${'p50 / ping'.padStart(11)}`)
for (const [name, s] of rows) {
  console.log(
    `${name.padEnd(24)} ${s.p50.toFixed(1).padStart(8)} ${s.p99.toFixed(1).padStart(8)} ${(s.p50 / base).toFixed(2).padStart(10)}x`,
  )
}
clearInterval(keepAlive)
process.exit(0)
