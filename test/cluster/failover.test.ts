// The scenario of issue 19 with real parts: PostgreSQL, nginx with the generated configuration,
// three `vis serve` processes, all traffic through nginx. One node is killed with SIGKILL while it
// runs a block; every session keeps working, the running block ends `lost`, SSE clients (the
// `eventsource` package) resume with every event once, an idempotent retry made one block; then
// the node comes back and takes new sessions.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { EventSource } from 'eventsource'
import { nginxConfig } from '../../src/cluster/nginx-config.js'
import { EventTypeSchema } from '../../src/engine/schemas.js'
import { freePort, type Nginx, startNginx } from '../helpers/nginx.js'
import { freshDatabaseUrl } from '../helpers/postgres.js'
import { client, type Json, rawRequest, waitFor } from '../http/helpers.js'
import { auth, startNode, stopAll, type VisNode } from './helpers.js'

const LEASE_MS = 2000
const SESSIONS = 30

let nodes: VisNode[] = []
let nginx: Nginx | undefined
let base = ''
let databaseUrl = ''
const ports: number[] = []

before(async () => {
  databaseUrl = freshDatabaseUrl()
  for (let i = 0; i < 3; i++) ports.push(await freePort())
  nodes = await Promise.all(
    ports.map((port, i) =>
      startNode({ id: `n${i + 1}`, port, databaseUrl, leaseMs: LEASE_MS, allowHost: 'vis.test' }),
    ),
  )
  const listen = await freePort()
  nginx = await startNginx(
    nginxConfig({ listen: `127.0.0.1:${listen}`, nodes: ports.map((p) => `127.0.0.1:${p}`) }),
  )
  base = `http://127.0.0.1:${listen}`
})

// Closed after the test whatever happened: an open EventSource reconnects forever.
const sources: EventSource[] = []

after(async () => {
  for (const es of sources) es.close()
  await stopAll(nodes)
  await nginx?.stop()
})

// One client author's EventSource on a session's events, through nginx: every event it got.
function watch(sessionId: string) {
  const got: { id: number; type: string; data: Json }[] = []
  const es = new EventSource(`${base}/v1/sessions/${sessionId}/events`, {
    fetch: (input, init) =>
      fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...auth } }),
  })
  sources.push(es)
  for (const type of EventTypeSchema.options) {
    es.addEventListener(type, (ev) =>
      got.push({ id: Number(ev.lastEventId), type, data: JSON.parse(ev.data) }),
    )
  }
  return { es, got }
}

const call = () => client(base, auth)

test('the nodes answer the name clients use through nginx, and only names they were given', async () => {
  const named = await rawRequest(`${base}/v1/sessions`, { headers: { ...auth, host: 'vis.test:8080' } })
  assert.equal(named.status, 200, named.text)
  const other = await rawRequest(`${base}/v1/sessions`, { headers: { ...auth, host: 'evil.test' } })
  assert.equal(other.status, 421)
  assert.equal(other.body.error.code, 'http.host-not-allowed')
})

test('30 sessions through nginx survive the loss of a node', { timeout: 170_000 }, async (t) => {
  const c = call()
  // ---- 30 sessions, each with a function, a literal and a plain value no snapshot can hold.
  const sessions: { id: string; owner: string; i: number }[] = []
  for (let i = 0; i < SESSIONS; i += 5) {
    const batch = await Promise.all(
      Array.from({ length: 5 }, async (_, k) => {
        const r = await c('POST', '/v1/sessions', { title: `s${i + k}` })
        assert.equal(r.status, 201, r.text)
        // Its owner is the node its first block reaches (below).
        return { id: r.body.id as string, owner: '', i: i + k }
      }),
    )
    sessions.push(...batch)
  }
  const acknowledged = new Map<string, string[]>()
  const ack = (sid: string, blockId: string) =>
    acknowledged.set(sid, [...(acknowledged.get(sid) ?? []), blockId])
  for (let i = 0; i < SESSIONS; i += 6) {
    await Promise.all(
      sessions.slice(i, i + 6).map(async (s) => {
        const code = `def f(x):\n    return x * ${s.i}\nk = ${s.i}\ngen = (n for n in range(3))\nf(2)`
        const r = await c('POST', `/v1/sessions/${s.id}/blocks`, { code })
        assert.equal(r.status, 200, r.text)
        assert.equal(r.body.result, 2 * s.i)
        s.owner = r.headers.get('x-vis-owner')!
        ack(s.id, r.body.id)
      }),
    )
  }
  assert.equal(
    new Set(sessions.map((s) => s.owner)).size,
    3,
    'nginx spread the sessions over the three nodes',
  )

  // ---- the victim: the owner of session 0; SSE clients on two of its sessions and two others.
  const victim = nodes.find((n) => n.id === sessions[0]!.owner)!
  const onVictim = sessions.filter((s) => s.owner === victim.id)
  const elsewhere = sessions.filter((s) => s.owner !== victim.id)
  assert.ok(onVictim.length >= 2, `the victim owns ${onVictim.length} sessions`)
  const running = onVictim[0]!
  const retried = onVictim[1]!
  const watched = [running, retried, ...elsewhere.slice(0, 2)].map((s) => ({ s, ...watch(s.id) }))
  const longCode = 'print("partial-1", flush=True)\nimport time\ntime.sleep(120)\nprint("never")'
  const started = await c(
    'POST',
    `/v1/sessions/${running.id}/blocks`,
    { code: longCode },
    { prefer: 'respond-async' },
  )
  assert.equal(started.status, 202, started.text)
  const lostId = started.body.id as string
  const runningWatch = watched[0]!
  await waitFor(
    () => runningWatch.got.some((e) => e.type === 'output' && e.data.data.data.includes('partial-1')),
    60_000,
    'the long block to print (its output event persisted and sent)',
  )

  // ---- kill -9 the victim mid-block.
  const killedAt = performance.now()
  await victim.kill()

  // An idempotent retry during the failure: resent with one key until a node answers it.
  const key = 'retry-during-failover'
  const retryCode = 'f(5)'
  const retryRun = (async () => {
    const rc = client(base, { ...auth, 'idempotency-key': key })
    for (;;) {
      const r = await rc('POST', `/v1/sessions/${retried.id}/blocks`, { code: retryCode }).catch(
        () => undefined,
      )
      if (r?.status === 200) return r
      assert.ok(r === undefined || [502, 503, 504].includes(r.status), `unexpected ${r?.status}: ${r?.text}`)
      // Polling, as a client's retry loop would: not faster than the failure comes back.
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  })()

  // Failover time: kill -> the first block of an affected session answered through nginx.
  const first = await c('POST', `/v1/sessions/${running.id}/blocks`, { code: `f(3), k, 'gen' in globals()` })
  const failoverMs = performance.now() - killedAt
  assert.equal(first.status, 200, first.text)
  assert.deepEqual(first.body.result, [3 * running.i, running.i, false], 'f and k restored, gen lost')
  assert.deepEqual(first.body.survived, null, 'the report is on the lost block, not this one')
  assert.notEqual(first.headers.get('x-vis-owner'), victim.id)
  ack(running.id, first.body.id)
  t.diagnostic(
    `failover: ${Math.round(failoverMs)} ms from SIGKILL to the first block of an affected session`,
  )

  // The block that was running on the victim ended lost, with what it had printed.
  const lost = await c('GET', `/v1/sessions/${running.id}/blocks/${lostId}`)
  assert.equal(lost.body.status, 'done')
  assert.equal(lost.body.error.code, 'block.lost')
  assert.match(lost.body.stdout, /partial-1/)
  assert.doesNotMatch(lost.body.stdout, /never/)
  assert.equal(lost.body.survived.cause, 'node-lost')
  assert.ok(lost.body.survived.restored.includes('f'), JSON.stringify(lost.body.survived))
  assert.ok(lost.body.survived.lost.includes('gen'), JSON.stringify(lost.body.survived))

  const retry = await retryRun
  assert.equal(retry.body.result, 5 * retried.i)
  ack(retried.id, retry.body.id)
  // A second retry after the failover is the same block.
  const again = await client(base, { ...auth, 'idempotency-key': key })(
    'POST',
    `/v1/sessions/${retried.id}/blocks`,
    {
      code: retryCode,
    },
  )
  assert.equal(again.status, 200)
  assert.equal(again.body.id, retry.body.id)
  assert.equal(again.headers.get('idempotent-replayed'), 'true')

  // ---- every session keeps working through nginx.
  for (let i = 0; i < SESSIONS; i += 6) {
    await Promise.all(
      sessions.slice(i, i + 6).map(async (s) => {
        const code = `f(7), k, 'gen' in globals(), (session.get('survived') or {}).get('lost')`
        const r = await c('POST', `/v1/sessions/${s.id}/blocks`, { code })
        assert.equal(r.status, 200, r.text)
        assert.equal(r.body.error, null, JSON.stringify(r.body.error))
        // Plain state is lost only where its node was, and the first block after the takeover
        // is told (the two sessions used above already heard it).
        const told = s.owner === victim.id && s !== running && s !== retried ? ['gen'] : null
        assert.deepEqual(r.body.result, [7 * s.i, s.i, s.owner !== victim.id, told], s.id)
        assert.notEqual(r.headers.get('x-vis-owner'), victim.id)
        ack(s.id, r.body.id)
      }),
    )
  }

  // ---- no acknowledged block is missing, and only the running one was lost.
  for (const s of sessions) {
    const d = await c('GET', `/v1/sessions/${s.id}`)
    const byId = new Map(d.body.blocks.map((b: Json) => [b.id, b]))
    for (const id of acknowledged.get(s.id) ?? []) {
      const b = byId.get(id) as Json
      assert.ok(b, `acknowledged block ${id} of ${s.id} is there`)
      assert.equal(b.status, 'done')
      assert.equal(b.error, null)
    }
    const lostHere = d.body.blocks.filter((b: Json) => b.error?.code === 'block.lost').map((b: Json) => b.id)
    assert.deepEqual(lostHere, s.id === running.id ? [lostId] : [])
    if (s.id === retried.id) {
      assert.equal(
        d.body.blocks.filter((b: Json) => b.code === retryCode).length,
        1,
        'the retry made one block',
      )
    }
  }

  // ---- SSE clients resumed: every event once, in order, no gap, up to the last block.
  for (const w of watched) {
    const finals = acknowledged.get(w.s.id)!.at(-1)!
    await waitFor(
      () => w.got.some((e) => e.type === 'block.finished' && e.data.data.block_id === finals),
      60_000,
      `the SSE client of ${w.s.id} to see its last block (readyState ${w.es.readyState})`,
    )
    const ids = w.got.map((e) => e.id)
    const firstId = ids[0]!
    assert.deepEqual(
      ids,
      Array.from({ length: ids.length }, (_, k) => firstId + k),
      `${w.s.id}: each event once, in order`,
    )
    if (w.s.id === running.id) {
      const lostEvent = w.got.find((e) => e.type === 'block.finished' && e.data.data.block_id === lostId)
      assert.equal(lostEvent?.data.data.error.code, 'block.lost')
    }
    w.es.close()
  }

  // ---- the node comes back (same id, same port) and takes new sessions; a block running on
  // another node meanwhile is left alone (no node closes others' blocks at start).
  const busy = elsewhere[2]!
  const sleeper = await c(
    'POST',
    `/v1/sessions/${busy.id}/blocks`,
    { code: 'import time\ntime.sleep(120)' },
    { prefer: 'respond-async' },
  )
  assert.equal(sleeper.status, 202)
  const back = await startNode({
    id: victim.id,
    port: victim.port,
    databaseUrl,
    leaseMs: LEASE_MS,
    allowHost: 'vis.test',
  })
  nodes = nodes.map((n) => (n.id === victim.id ? back : n))
  let taken: string | undefined
  await waitFor(
    async () => {
      const r = await c('POST', '/v1/sessions', {})
      assert.equal(r.status, 201, r.text)
      const b = await c('POST', `/v1/sessions/${r.body.id}/blocks`, { code: '6 * 7' })
      assert.equal(b.status, 200, b.text)
      if (b.headers.get('x-vis-owner') === victim.id) taken = r.body.id
      return taken !== undefined
    },
    60_000,
    'nginx to send a new session to the restarted node',
  )
  const onBack = await c('POST', `/v1/sessions/${taken}/blocks`, { code: '6 * 7' })
  assert.equal(onBack.status, 200)
  assert.equal(onBack.body.result, 42)
  assert.equal(onBack.headers.get('x-vis-owner'), victim.id)
  const still = await c('GET', `/v1/sessions/${busy.id}/blocks/${sleeper.body.id}`)
  assert.equal(still.body.status, 'running', 'the restarted node left the other node’s block running')
  const stopped = await c('POST', `/v1/sessions/${busy.id}/interrupt`, { block_id: sleeper.body.id })
  assert.equal(stopped.status, 200, stopped.text)
  assert.equal(stopped.body.landed, true)
})
