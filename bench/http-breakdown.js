#!/usr/bin/env node
// Where a trivial block's time over HTTP goes (issue 15 §5). Reported, never asserted.
//
//   npm run build && node bench/http-breakdown.js [--blocks N] [--json]
//
// Runs `x = 1` over HTTP keep-alive on a warm session twice: once plain (its p50 is the figure
// the breakdown explains), once under V8's sampling profiler. Every profiler sample of the host
// process is charged to one part of the path, found from the innermost frame upwards (SQLite's
// native calls, zod, the worker channel, ...); the parts' shares of the profiled pass are then
// applied to the plain pass's p50, so the rows add up to the measured p50. "idle" is the host's
// event loop waiting: for the worker to run the block, for the client, for a CPU.
import { mkdtempSync } from 'node:fs'
import { Agent } from 'node:http'
import { Session } from 'node:inspector/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const built = (file) =>
  import(new URL(`../dist/${file}`, import.meta.url).href).catch(() => {
    console.error('bench/http-breakdown.js needs the built package: run `npm run build` first')
    process.exit(2)
  })
const { startServer } = await built('http/server.js')
// The same keep-alive client as bench/http.js.
const { poster } = await built('bench/http.js')

const argv = process.argv.slice(2)
const blocksArg = argv.indexOf('--blocks')
const N = blocksArg >= 0 ? Number(argv[blocksArg + 1]) : 3000

// Ordered: the first part whose test matches a frame, walking from the sampled frame up to
// the root, gets the sample.
const PARTS = [
  [
    'fsync of the WAL (group commit)',
    (f) => /persistence\/group-commit/.test(f.url) || f.functionName === 'fsyncSync',
  ],
  [
    'SQLite: statements, commits, WAL writes',
    (f) =>
      (f.url === '' && /^(run|get|all|exec|iterate)$/.test(f.functionName)) ||
      /better-sqlite3/.test(f.url) ||
      (/persistence\/store\.js/.test(f.url) && /lazily|transaction/.test(f.functionName)),
  ],
  ['zod validation', (f) => /node_modules\/zod\//.test(f.url)],
  [
    'worker channel, host side (framing, socket I/O)',
    (f) => /dist\/(protocol|worker|sessions)\//.test(f.url),
  ],
  [
    'engine and persistence JS (rows, events, views)',
    (f) => /dist\/(engine|persistence|drafts|util)\//.test(f.url),
  ],
  [
    'HTTP server (Node parser, hono, guards, routes, response)',
    (f) =>
      /dist\/http\/|node_modules\/hono\/|@hono\/node-server|_http_server|_http_incoming|_http_outgoing|_http_common/.test(
        f.url,
      ),
  ],
  [
    'HTTP client (this bench; the echo floor has it too)',
    (f) => /_http_client|_http_agent|http-breakdown\.js/.test(f.url),
  ],
  ['garbage collector', (f) => f.functionName === '(garbage collector)'],
  ['idle: waiting for the worker, the client, a CPU', (f) => f.functionName === '(idle)'],
]
const OTHER = 'other (timers, promises, streams)'

function breakdown(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const totals = new Map()
  for (const id of profile.samples) {
    let label = OTHER
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const hit = PARTS.find(([, test]) => test(byId.get(cur).callFrame))
      if (hit) {
        label = hit[0]
        break
      }
    }
    totals.set(label, (totals.get(label) ?? 0) + 1)
  }
  return new Map([...totals].map(([k, v]) => [k, v / profile.samples.length]))
}

const home = mkdtempSync(join(tmpdir(), 'vis-bench-breakdown-'))
const token = 'bench-token-0123456789abcdef0123'
const server = await startServer({ home, port: 0, pool: { size: 1 }, token })
const agent = new Agent({ keepAlive: true, maxSockets: 1 })
const post = poster(server.url, agent, { authorization: `Bearer ${token}` })

try {
  const sid = JSON.parse((await post('/v1/sessions', '{}')).text).id
  const path = `/v1/sessions/${sid}/blocks`
  const body = JSON.stringify({ code: 'x = 1' })
  const pass = async () => {
    const times = []
    for (let i = 0; i < N; i++) {
      const t0 = performance.now()
      const r = await post(path, body)
      times.push((performance.now() - t0) * 1000)
      if (r.status !== 200) throw new Error(`block failed: ${r.status} ${r.text}`)
    }
    times.sort((a, b) => a - b)
    return { p50: times[Math.floor(N / 2)], mean: times.reduce((a, b) => a + b, 0) / N }
  }
  await pass() // warm: JIT, statement cache, pool
  const plain = await pass()
  const inspector = new Session()
  inspector.connect()
  await inspector.post('Profiler.enable')
  await inspector.post('Profiler.setSamplingInterval', { interval: 100 })
  await inspector.post('Profiler.start')
  const profiled = await pass()
  const { profile } = await inspector.post('Profiler.stop')
  inspector.disconnect()
  const shares = [...breakdown(profile)].sort((a, b) => b[1] - a[1])
  const rows = shares.map(([part, share]) => ({ part, share, us: share * plain.p50 }))
  if (argv.includes('--json')) {
    console.log(JSON.stringify({ blocks: N, p50_us: plain.p50, profiled_mean_us: profiled.mean, rows }))
  } else {
    console.log(
      `where a block's time goes (x = 1 over HTTP, ${N} blocks; p50 ${plain.p50.toFixed(0)} µs, ` +
        `profiled pass mean ${profiled.mean.toFixed(0)} µs)`,
    )
    for (const r of rows) {
      console.log(
        `  ${r.us.toFixed(0).padStart(6)} µs  ${(100 * r.share).toFixed(1).padStart(5)}%  ${r.part}`,
      )
    }
    console.log(`  ${plain.p50.toFixed(0).padStart(6)} µs          total: the p50`)
  }
} finally {
  agent.destroy()
  await server.close()
}
