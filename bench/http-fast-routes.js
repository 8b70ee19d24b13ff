#!/usr/bin/env node
// The fast routes' gain, A/B in one process (issue 15 §5). Reported, never asserted.
//
//   npm run build && node bench/http-fast-routes.js [--rounds N] [--batch N] [--durability full|normal] [--json]
//
// One engine, two servers over it: one with the fast routes (the default), one without
// (`fastRoutes: false`, every request through hono). Rounds alternate between them, so load from
// anything else on the machine falls on both alike. Per server: `x = 1` over keep-alive (p50,
// host CPU per block) and a GET of a done block (p50, host CPU per read), with the token and an
// allowed CORS origin, so every guard runs. The ratios are fast ÷ hono from the same run.
import { mkdtempSync } from 'node:fs'
import { Agent } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const built = (file) =>
  import(new URL(`../dist/${file}`, import.meta.url).href).catch(() => {
    console.error('bench/http-fast-routes.js needs the built package: run `npm run build` first')
    process.exit(2)
  })
const { startServer } = await built('http/server.js')
const { createEngine } = await built('engine/engine.js')
const { poster, getter } = await built('bench/http.js')

const argv = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = argv.indexOf(name)
  return i >= 0 ? Number(argv[i + 1]) : dflt
}
const ROUNDS = opt('--rounds', 20)
// `normal` leaves the per-block fsync out: on a busy shared disk it dominates the p50.
const durabilityArg = argv.indexOf('--durability')
const durability = durabilityArg >= 0 ? argv[durabilityArg + 1] : 'full'
const BATCH = opt('--batch', 100)
const token = 'bench-token-0123456789abcdef0123'
const origin = 'http://ui.bench:5173'
const headers = { authorization: `Bearer ${token}`, origin }

const home = mkdtempSync(join(tmpdir(), 'vis-bench-fast-routes-'))
const engine = await createEngine({ home, pool: { size: 2 }, durability })
const sides = []
for (const fastRoutes of [true, false]) {
  const server = await startServer({ engine, port: 0, token, corsOrigins: [origin], fastRoutes })
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const post = poster(server.url, agent, headers)
  const get = getter(server.url, agent, headers)
  const sid = JSON.parse((await post('/v1/sessions', '{}')).text).id
  sides.push({
    name: fastRoutes ? 'fast routes' : 'hono only',
    server,
    agent,
    post,
    get,
    path: `/v1/sessions/${sid}/blocks`,
    block: [],
    read: [],
    blockCpu: 0,
    readCpu: 0,
  })
}
const body = JSON.stringify({ code: 'x = 1' })
const cpu = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}

async function batch(side, record) {
  let location
  let c0 = cpu()
  for (let i = 0; i < BATCH; i++) {
    const t0 = performance.now()
    const r = await side.post(side.path, body)
    if (record) side.block.push((performance.now() - t0) * 1000)
    if (r.status !== 200) throw new Error(`block failed: ${r.status} ${r.text}`)
    location ??= `${side.path}/${JSON.parse(r.text).id}`
  }
  if (record) side.blockCpu += cpu() - c0
  c0 = cpu()
  for (let i = 0; i < BATCH; i++) {
    const t0 = performance.now()
    const r = await side.get(location)
    if (record) side.read.push((performance.now() - t0) * 1000)
    if (r.status !== 200) throw new Error(`read failed: ${r.status} ${r.text}`)
  }
  if (record) side.readCpu += cpu() - c0
}

try {
  for (const side of sides) await batch(side, false) // warm: JIT, statements, pool
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which goes first, so neither always follows the other.
    const order = r % 2 === 0 ? sides : [...sides].reverse()
    for (const side of order) await batch(side, true)
  }
  const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  const n = ROUNDS * BATCH
  const rows = sides.map((s) => ({
    name: s.name,
    served_fast: s.server.fastRoutes?.served ?? 0,
    block_p50_us: p50(s.block),
    block_cpu_us: s.blockCpu / n,
    read_p50_us: p50(s.read),
    read_cpu_us: s.readCpu / n,
  }))
  const [fast, hono] = rows
  const ratio = (k) => fast[k] / hono[k]
  if (argv.includes('--json')) {
    console.log(JSON.stringify({ rounds: ROUNDS, batch: BATCH, durability, rows }))
  } else {
    console.log(
      `fast routes vs hono only, same process, ${ROUNDS} alternating rounds × ${BATCH} requests each, durability ${durability}`,
    )
    const f = (x) => x.toFixed(0).padStart(7)
    console.log('                      block p50   CPU/block   read p50   CPU/read   (µs)')
    for (const r of rows) {
      console.log(
        `  ${r.name.padEnd(18)} ${f(r.block_p50_us)}     ${f(r.block_cpu_us)}    ${f(r.read_p50_us)}    ${f(r.read_cpu_us)}`,
      )
    }
    const x = (k) => `${ratio(k).toFixed(2)}×`.padStart(7)
    console.log(
      `  ${'fast ÷ hono'.padEnd(18)} ${x('block_p50_us')}     ${x('block_cpu_us')}    ${x('read_p50_us')}    ${x('read_cpu_us')}`,
    )
  }
} finally {
  for (const s of sides) {
    s.agent.destroy()
    await s.server.close()
  }
  await engine.close()
}
