#!/usr/bin/env node
// Two builds in ONE process, interleaved: `x = 1` blocks over HTTP keep-alive against this
// checkout's dist/ and another's (--baseline DIR, e.g. /work/wt/integ2), alternating rounds of
// --round blocks so machine noise (a shared box, a CI run beside) hits both alike. Prints each
// side's block p50 and the host CPU per block (the bench client runs in-process, so this is the
// main thread's whole bill per block), and the ratios. Reported, never asserted.
//
//   npm run build && node bench/http-ab.js --baseline /work/wt/integ2 [--blocks 3000] [--round 100]
//     [--candidate DIR] [--warmup 3000]
import { mkdtempSync } from 'node:fs'
import { Agent } from 'node:http'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const argv = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : dflt
}
const baseline = opt('--baseline')
if (!baseline) {
  console.error(
    'usage: node bench/http-ab.js --baseline <checkout with a built dist/> [--blocks N] [--round N]',
  )
  process.exit(2)
}
const N = Number(opt('--blocks', 3000))
const ROUND = Number(opt('--round', 100))
// V8 goes on optimizing the block path for thousands of requests (its compiler threads took
// ~300 us of CPU per block after 500 blocks, ~25 after 5000): measure the steady state.
const WARMUP = Number(opt('--warmup', 3000))
const token = 'bench-token-0123456789abcdef0123'

async function side(name, root) {
  const load = (file) => import(pathToFileURL(join(root, 'dist', file)).href)
  const { startServer } = await load('http/server.js')
  // The client moved to dist/bench/ (issue 35); a baseline built before that has it in dist/http/.
  const { poster } = await load('bench/http.js').catch(() => load('http/bench-http.js'))
  const home = mkdtempSync(join(tmpdir(), `vis-bench-ab-${name}-`))
  const server = await startServer({ home, port: 0, pool: { size: 1 }, token })
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const post = poster(server.url, agent, { authorization: `Bearer ${token}` })
  const sid = JSON.parse((await post('/v1/sessions', '{}')).text).id
  const path = `/v1/sessions/${sid}/blocks`
  const body = JSON.stringify({ code: 'x = 1' })
  const times = []
  let cpu = 0
  // Per round: its CPU per block and its p50, paired with the other side's same round.
  const rounds = []
  const round = async (record) => {
    const c0 = process.cpuUsage()
    const mine = []
    for (let i = 0; i < ROUND; i++) {
      const t0 = performance.now()
      const r = await post(path, body)
      if (r.status !== 200) throw new Error(`${name}: block failed: ${r.status} ${r.text}`)
      mine.push((performance.now() - t0) * 1000)
    }
    const c = process.cpuUsage(c0)
    if (!record) return
    cpu += c.user + c.system
    times.push(...mine)
    mine.sort((a, b) => a - b)
    rounds.push({ cpu: (c.user + c.system) / ROUND, p50: mine[Math.floor(ROUND / 2)] })
  }
  const close = async () => {
    agent.destroy()
    await server.close()
  }
  return { name, round, times, rounds, cpu: () => cpu, close }
}

const sides = [
  // --candidate DIR: another checkout in this one's place (an A/A run shows the bench's own bias).
  await side('this', resolve(opt('--candidate', new URL('..', import.meta.url).pathname))),
  await side('baseline', baseline),
]
try {
  for (let done = 0; done < WARMUP; done += ROUND) for (const s of sides) await s.round(false) // JIT, statements, pool
  for (let done = 0; done < N; done += ROUND) for (const s of sides) await s.round(true)
  const stats = sides.map((s) => {
    const t = [...s.times].sort((a, b) => a - b)
    return {
      name: s.name,
      p50: t[Math.floor(t.length / 2)],
      p90: t[Math.floor(t.length * 0.9)],
      cpu: s.cpu() / t.length,
    }
  })
  console.log(`x = 1 over HTTP, ${N} blocks each, interleaved in rounds of ${ROUND} (baseline ${baseline})`)
  for (const s of stats) {
    console.log(
      `  ${s.name.padEnd(8)}  p50 ${s.p50.toFixed(0).padStart(5)} µs  p90 ${s.p90.toFixed(0).padStart(5)} µs  host CPU/block ${s.cpu.toFixed(0).padStart(5)} µs`,
    )
  }
  const [a, b] = stats
  console.log(
    `  this / baseline: p50 ${(a.p50 / b.p50).toFixed(3)}×, host CPU per block ${(a.cpu / b.cpu).toFixed(3)}×`,
  )
  // The same ratios round by round (each pair ran back to back, so a burst of load from other
  // work hits both): their median and quartiles say how far the pooled ratio can be trusted.
  const [mine, theirs] = sides.map((s) => s.rounds)
  const paired = (key) => {
    const r = mine.map((m, i) => m[key] / theirs[i][key]).sort((x, y) => x - y)
    const q = (f) => r[Math.floor((r.length - 1) * f)].toFixed(3)
    return `${q(0.5)}× (quartiles ${q(0.25)}–${q(0.75)})`
  }
  console.log(`  round by round (${mine.length} pairs): p50 ${paired('p50')}, host CPU ${paired('cpu')}`)
} finally {
  for (const s of sides) await s.close()
}
