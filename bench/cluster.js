// The cluster's figures (issue 19), reported, never asserted:
//   node --import tsx bench/cluster.js [--sessions 12] [--seconds 8] [--failovers 3]
// Real parts: a throwaway PostgreSQL, three `vis serve` nodes, nginx with the generated
// configuration. In one run it measures
//   - blocks/s through nginx with 1 node (the baseline) and with 3 nodes, and their ratio;
//   - CPU per block of each node's process tree (node + its Python workers) and of PostgreSQL,
//     from /proc, so the scaling on a machine with more cores can be projected: on this 2-vCPU
//     machine three nodes share two cores, which bounds the measured ratio;
//   - failover time: SIGKILL of a node running a block -> the first successful block of that
//     session through nginx (the lease length bounds it).
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { nginxConfig } from '../src/cluster/nginx-config.ts'
import { startNode } from '../test/cluster/helpers.ts'
import { freePort, startNginx } from '../test/helpers/nginx.ts'
import { freshDatabaseUrl, postgresServer } from '../test/helpers/postgres.ts'
import { client } from '../test/http/helpers.ts'

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? Number(process.argv[i + 1]) : dflt
}
const SESSIONS = arg('sessions', 12)
const SECONDS = arg('seconds', 8)
const FAILOVERS = arg('failovers', 3)
const LEASE_MS = arg('lease-ms', 2000)
const TOKEN = 'cluster-test-token-0123456789abcdef'
const auth = { authorization: `Bearer ${TOKEN}` }

// CPU seconds (user + system) of a process and all its descendants.
const TICK = 100
function treeCpu(root) {
  const parent = new Map()
  const cpu = new Map()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      parent.set(Number(name), Number(f[1]))
      cpu.set(Number(name), (Number(f[11]) + Number(f[12])) / TICK)
    } catch {
      // Gone meanwhile.
    }
  }
  let total = 0
  for (const [pid, s] of cpu) {
    for (let p = pid, i = 0; p > 1 && i < 30; p = parent.get(p) ?? 0, i++) {
      if (p === root) {
        total += s
        break
      }
    }
  }
  return total
}

const postmasterPid = () =>
  Number(readFileSync(join(postgresServer().dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0])

// n sessions, as many on each of `owners` nodes (creations land where nginx sends them: the
// surplus is closed), each with a warm worker.
async function createSessions(base, n, owners) {
  const c = client(base, auth)
  const out = []
  const per = new Map(owners.map((o) => [o, 0]))
  while (out.length < n) {
    const r = await c('POST', '/v1/sessions', {})
    if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`)
    // The first block starts the worker where the session's requests land (its owner); the load
    // below measures warm blocks.
    const warm = await c('POST', `/v1/sessions/${r.body.id}/blocks`, { code: 'x = 0' })
    if (warm.status !== 200) throw new Error(`first block: ${warm.status} ${warm.text}`)
    const owner = warm.headers.get('x-vis-owner')
    if ((per.get(owner) ?? n) >= n / owners.length) {
      await c('DELETE', `/v1/sessions/${r.body.id}`)
      continue
    }
    per.set(owner, per.get(owner) + 1)
    out.push({ id: r.body.id, owner })
  }
  return out
}

// One client per session, each sending `x += 1` blocks back to back for SECONDS.
async function load(base, sessions, nodes) {
  const c = client(base, auth)
  const cpu0 = new Map(nodes.map((n) => [n.id, treeCpu(n.child.pid)]))
  const pg0 = treeCpu(postmasterPid())
  const until = performance.now() + SECONDS * 1000
  const t0 = performance.now()
  const perNode = new Map(nodes.map((n) => [n.id, 0]))
  let blocks = 0
  await Promise.all(
    sessions.map(async (s) => {
      while (performance.now() < until) {
        const r = await c('POST', `/v1/sessions/${s.id}/blocks`, { code: 'x += 1' })
        if (r.status !== 200 || r.body.error) throw new Error(`block: ${r.status} ${r.text}`)
        blocks++
        const owner = r.headers.get('x-vis-owner')
        perNode.set(owner, (perNode.get(owner) ?? 0) + 1)
      }
    }),
  )
  const secs = (performance.now() - t0) / 1000
  const nodeCpu = nodes.map((n) => {
    const used = treeCpu(n.child.pid) - cpu0.get(n.id)
    const served = perNode.get(n.id) ?? 0
    return { id: n.id, blocks: served, cpuS: used, cpuMsPerBlock: served > 0 ? (used * 1000) / served : null }
  })
  const pgCpu = treeCpu(postmasterPid()) - pg0
  return { blocks, secs, perSecond: blocks / secs, nodeCpu, pgCpuMsPerBlock: (pgCpu * 1000) / blocks }
}

// Arrival time of each SSE event id on one stream (performance.now()).
async function timedStream(url) {
  const ac = new AbortController()
  const res = await fetch(url, { headers: auth, signal: ac.signal })
  const arrived = new Map()
  const reading = (async () => {
    const decoder = new TextDecoder()
    let buf = ''
    for await (const chunk of res.body) {
      const now = performance.now()
      buf += decoder.decode(chunk, { stream: true })
      for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
        const id = /^id: (\d+)$/m.exec(buf.slice(0, i))
        if (id) arrived.set(Number(id[1]), now)
        buf = buf.slice(i + 2)
      }
    }
  })().catch(() => undefined)
  return {
    arrived,
    owner: res.headers.get('x-vis-owner'),
    close: async () => {
      ac.abort()
      await reading
    },
  }
}

// Live events: one session's stream read on its owner and, at once, through another node that
// forwards it; the same events' arrival times differ by what the forwarding hop costs.
async function eventLatency(base, nodes) {
  const c = client(base, auth)
  const [s] = await createSessions(
    base,
    1,
    nodes.map((n) => n.id),
  )
  const owner = nodes.find((n) => n.id === s.owner)
  const other = nodes.find((n) => n.id !== s.owner)
  const direct = await timedStream(`${owner.url}/v1/sessions/${s.id}/events`)
  const forwarded = await timedStream(`${other.url}/v1/sessions/${s.id}/events`)
  for (let i = 0; i < 30; i++) {
    await c('POST', `/v1/sessions/${s.id}/blocks`, { code: `print(${i})` })
  }
  await new Promise((r) => setTimeout(r, 300))
  await direct.close()
  await forwarded.close()
  const hops = [...direct.arrived]
    .filter(([id]) => forwarded.arrived.has(id))
    .map(([id, t]) => forwarded.arrived.get(id) - t)
  hops.sort((a, b) => a - b)
  return {
    events: hops.length,
    median: hops[Math.floor(hops.length / 2)],
    p90: hops[Math.floor(hops.length * 0.9)],
    forwardedBy: forwarded.owner,
  }
}

const databaseUrl = freshDatabaseUrl()
const ports = [await freePort(), await freePort(), await freePort()]
let nodes = await Promise.all(
  ports.map((port, i) => startNode({ id: `n${i + 1}`, port, databaseUrl, leaseMs: LEASE_MS })),
)
const listen1 = await freePort()
const listen3 = await freePort()
const nginx1 = await startNginx(
  nginxConfig({ listen: `127.0.0.1:${listen1}`, nodes: [`127.0.0.1:${ports[0]}`] }),
)
const nginx3 = await startNginx(
  nginxConfig({ listen: `127.0.0.1:${listen3}`, nodes: ports.map((p) => `127.0.0.1:${p}`) }),
)
const base1 = `http://127.0.0.1:${listen1}`
const base3 = `http://127.0.0.1:${listen3}`

try {
  const s1 = await createSessions(base1, SESSIONS, ['n1'])
  const one = await load(base1, s1, [nodes[0]])
  for (const s of s1) await client(base1, auth)('DELETE', `/v1/sessions/${s.id}`)
  const s3 = await createSessions(base3, SESSIONS, ['n1', 'n2', 'n3'])
  const three = await load(base3, s3, nodes)

  const latency = await eventLatency(base3, nodes)

  // Failover: a block running on the owner of a session, the owner killed, the session's next
  // block through nginx timed; then the node restarted for the next round.
  const failovers = []
  for (let k = 0; k < FAILOVERS; k++) {
    const c = client(base3, auth)
    const [s] = await createSessions(base3, 1, ['n1', 'n2', 'n3'])
    const victim = nodes.find((n) => n.id === s.owner)
    await c(
      'POST',
      `/v1/sessions/${s.id}/blocks`,
      { code: 'import time\ntime.sleep(60)' },
      { prefer: 'respond-async' },
    )
    const t0 = performance.now()
    await victim.kill()
    const r = await c('POST', `/v1/sessions/${s.id}/blocks`, { code: 'x' })
    const ms = performance.now() - t0
    if (r.status !== 200) throw new Error(`after failover: ${r.status} ${r.text}`)
    failovers.push(ms)
    const back = await startNode({ id: victim.id, port: victim.port, databaseUrl, leaseMs: LEASE_MS })
    nodes = nodes.map((n) => (n === victim ? back : n))
  }

  const f1 = (x) => x.toFixed(1)
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  console.log(
    `cluster bench: ${SESSIONS} sessions, one client each sending \`x += 1\` for ${SECONDS} s, through nginx`,
  )
  console.log(`  1 node : ${f1(one.perSecond)} blocks/s (${one.blocks} blocks)`)
  console.log(`  3 nodes: ${f1(three.perSecond)} blocks/s (${three.blocks} blocks)`)
  console.log(
    `  ratio 3 nodes / 1 node: ${(three.perSecond / one.perSecond).toFixed(2)}x on ${(await import('node:os')).cpus().length} vCPUs`,
  )
  console.log('  CPU per block (node process + its workers), from /proc:')
  for (const n of one.nodeCpu)
    console.log(`    1-node run ${n.id}: ${f1(n.cpuMsPerBlock ?? 0)} ms (${n.blocks} blocks)`)
  for (const n of three.nodeCpu)
    console.log(`    3-node run ${n.id}: ${f1(n.cpuMsPerBlock ?? 0)} ms (${n.blocks} blocks)`)
  console.log(
    `    PostgreSQL: ${f1(one.pgCpuMsPerBlock)} ms (1 node), ${f1(three.pgCpuMsPerBlock)} ms (3 nodes)`,
  )
  const perBlock = (three.nodeCpu.reduce((a, n) => a + n.cpuS, 0) * 1000) / three.blocks
  console.log(
    `  projection: one core per node sustains about ${f1(1000 / perBlock)} blocks/s; N nodes on N cores about N times that,` +
      ` until PostgreSQL (${f1(three.pgCpuMsPerBlock)} ms CPU per block) or nginx saturate`,
  )
  console.log(
    `  live events: ${latency.events} events read on the owner and through a forwarding node at once; ` +
      `the forwarded copy arrives ${f1(latency.median)} ms later (median; p90 ${f1(latency.p90)} ms)`,
  )
  console.log(
    `  failover (SIGKILL -> first block of an affected session, lease ${LEASE_MS} ms): ` +
      `median ${Math.round(median(failovers))} ms of ${failovers.map((x) => Math.round(x)).join(', ')}`,
  )
} catch (err) {
  for (const n of nodes) console.error(`--- ${n.id} stderr:\n${n.err().slice(-3000)}`)
  throw err
} finally {
  await Promise.all(nodes.map((n) => n.kill()))
  await nginx1.stop()
  await nginx3.stop()
}
process.exit(0)
