// Two real `vis serve` nodes on one PostgreSQL: a request reaching the node that does not own a
// session is answered by the owner (blocks, reads, SSE), never run locally; a frozen owner's
// session is taken over once its lease expires, and the owner, thawed, gives its worker up.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { nginxConfig } from '../../src/cluster/nginx-config.js'
import { PgDatabase } from '../../src/persistence/postgres/database.js'
import { freshDatabaseUrl } from '../helpers/postgres.js'
import { client, openEvents, rawRequest, waitFor } from '../http/helpers.js'
import { auth, startNode, stopAll, type VisNode } from './helpers.js'

const LEASE_MS = 1500

// Sessions with a live worker in that node's process (its own /metrics, never forwarded).
async function liveWorkers(node: VisNode): Promise<number> {
  const r = await client(node.url, auth)('GET', '/metrics')
  return Number(/^vis_sessions_live (\d+)/m.exec(r.text)![1])
}

// A block through a node, retried with one Idempotency-Key while the answer is 502 (the owner
// broke off after the request may have reached it): what a careful client does.
async function runRetrying(node: VisNode, sid: string, code: string, key: string) {
  const call = client(node.url, { ...auth, 'idempotency-key': key })
  for (let i = 0; ; i++) {
    const r = await call('POST', `/v1/sessions/${sid}/blocks`, { code })
    if (r.status !== 502 || i >= 5) return r
  }
}

describe('cluster ownership', () => {
  let n1: VisNode
  let n2: VisNode
  let databaseUrl: string
  before(async () => {
    databaseUrl = freshDatabaseUrl()
    ;[n1, n2] = await Promise.all([
      startNode({ id: 'n1', databaseUrl, leaseMs: LEASE_MS }),
      startNode({ id: 'n2', databaseUrl, leaseMs: LEASE_MS }),
    ])
  })
  after(async () => {
    if (n1?.child.signalCode === 'SIGSTOP') n1.child.kill('SIGCONT')
    await stopAll([n1, n2])
  })

  let sid = ''

  it('a node keeps an idle connection open longer than nginx does, so nginx never reuses one the node is closing', async () => {
    const r = await rawRequest(`${n1.url}/v1/health`, { headers: { ...auth, connection: 'keep-alive' } })
    assert.equal(r.status, 200, r.text)
    const nodeS = Number(/timeout=(\d+)/.exec(String(r.headers['keep-alive']))?.[1])
    const config = nginxConfig({ listen: '127.0.0.1:8080', nodes: ['127.0.0.1:7001'] })
    const nginxS = Number(/keepalive_timeout (\d+)s;/.exec(config)?.[1])
    assert.ok(nodeS > nginxS, `the node closes idle connections after ${nodeS} s, nginx after ${nginxS} s`)
  })

  it('a request to the other node is answered by the owner, never run there', async () => {
    const c1 = client(n1.url, auth)
    const c2 = client(n2.url, auth)
    const created = await c1('POST', '/v1/sessions', {})
    assert.equal(created.status, 201, created.text)
    // Created anywhere, owned by nobody yet: the node its requests reach takes it.
    assert.equal(created.headers.get('x-vis-owner'), null)
    assert.equal(created.body.worker, 'dormant')
    assert.equal(await liveWorkers(n1), 0)
    sid = created.body.id
    const first = await c1('POST', `/v1/sessions/${sid}/blocks`, { code: 'k = 1' })
    assert.equal(first.status, 200, first.text)
    assert.equal(first.headers.get('x-vis-owner'), 'n1')
    const ran = await c2('POST', `/v1/sessions/${sid}/blocks`, { code: 'def f():\n    return 41 + 1\nf()' })
    assert.equal(ran.status, 200, ran.text)
    assert.equal(ran.body.result, 42)
    assert.equal(ran.headers.get('x-vis-owner'), 'n1')
    assert.equal(await liveWorkers(n1), 1, 'the block ran in a worker of n1')
    assert.equal(await liveWorkers(n2), 0, 'and n2 started none')
    const view = await c2('GET', `/v1/sessions/${sid}`)
    assert.equal(view.status, 200)
    assert.equal(view.body.worker, 'live', "n2 answers with n1's live view")
    assert.equal(view.headers.get('x-vis-owner'), 'n1')
    // Unknown sessions stay the route's 404 on any node.
    const missing = await c2('GET', '/v1/sessions/ses_nope')
    assert.equal(missing.status, 404)
    assert.equal(missing.body.error.code, 'session.not-found')
    const malformed = await c2('GET', '/v1/sessions/%E0%A4%A')
    assert.ok(malformed.status === 404 || malformed.status === 400, `${malformed.status} ${malformed.text}`)
  })

  it("a page's same-origin request stays same-origin when forwarded; another origin is refused", async () => {
    const page = (origin: string) =>
      rawRequest(`${n2.url}/v1/sessions/${sid}/blocks`, {
        method: 'POST',
        headers: { ...auth, origin, 'content-type': 'application/json' },
        body: JSON.stringify({ code: '"from the page"' }),
      })
    const own = await page(n2.url)
    assert.equal(own.status, 200, own.text)
    assert.equal(own.headers['x-vis-owner'], 'n1')
    assert.equal(own.body.result, 'from the page')
    const other = await page('http://evil.test')
    assert.equal(other.status, 403)
    assert.equal(other.body.error.code, 'http.origin-not-allowed')
  })

  it('streams the owner’s events through the other node', async () => {
    const stream = await openEvents(`${n2.url}/v1/sessions/${sid}/events`, auth)
    assert.equal(stream.status, 200)
    assert.equal(stream.headers.get('x-vis-owner'), 'n1')
    const ran = await client(n1.url, auth)('POST', `/v1/sessions/${sid}/blocks`, {
      code: 'print("through n2")',
    })
    assert.equal(ran.status, 200)
    await stream.waitFor(
      (evs) => evs.some((e) => e.event === 'output' && e.data.data.data.includes('through n2')),
      30_000,
      'the output event via n2',
    )
    const ids = stream.events.map((e) => e.id!)
    assert.deepEqual(
      ids,
      [...new Set(ids)].sort((a, b) => a - b),
      'in order, each once',
    )
    await stream.close()
  })

  it('a request forwarded once is never forwarded again', async () => {
    const r = await client(n2.url, { ...auth, 'x-vis-forwarded-by': 'n3' })('GET', `/v1/sessions/${sid}`)
    assert.equal(r.status, 503)
    assert.equal(r.body.error.code, 'cluster.not-owner')
    // It did nothing: the node that forwarded it may ask the new owner.
    assert.equal(r.headers.get('x-vis-misrouted'), '1')
    assert.equal(r.headers.get('x-vis-owner'), 'n1')
  })

  it('a frozen owner is taken over after its lease; thawed, it gives its worker up', async () => {
    n1.child.kill('SIGSTOP')
    const ran = await runRetrying(n2, sid, 'f() + 1', 'frozen-1')
    assert.equal(ran.status, 200, ran.text)
    assert.equal(ran.body.error, null, JSON.stringify(ran.body.error))
    assert.equal(ran.body.result, 43, 'f came back from the defs snapshot')
    assert.equal(ran.headers.get('x-vis-owner'), 'n2')
    assert.equal(await liveWorkers(n2), 1, 'now it runs in a worker of n2')
    // n1's worker still exists while n1 is frozen; thawed, its next renewal fails and it stops it.
    n1.child.kill('SIGCONT')
    await waitFor(async () => (await liveWorkers(n1)) === 0, 30_000, 'n1 to stop its worker')
    const via1 = await client(n1.url, auth)('POST', `/v1/sessions/${sid}/blocks`, { code: 'f() + 2' })
    assert.equal(via1.status, 200, via1.text)
    assert.equal(via1.body.result, 44)
    assert.equal(via1.headers.get('x-vis-owner'), 'n2')
    assert.equal(await liveWorkers(n1), 0, 'n1 did not start one again')
    // The retried submission made one block, whatever reached the frozen node.
    const detail = await client(n2.url, auth)('GET', `/v1/sessions/${sid}`)
    assert.equal(detail.body.blocks.filter((b: { code: string }) => b.code === 'f() + 1').length, 1)
  })

  it('closing through the other node closes on the owner and drops the lease; any node reads it then', async () => {
    const closed = await client(n1.url, auth)('DELETE', `/v1/sessions/${sid}`)
    assert.equal(closed.status, 200, closed.text)
    assert.equal(closed.body.state, 'closed')
    assert.equal(closed.headers.get('x-vis-owner'), 'n2')
    const db = new PgDatabase(databaseUrl)
    try {
      const row = db.prepare('SELECT count(*) AS n FROM session_leases WHERE session_id = ?').get(sid) as {
        n: unknown
      }
      assert.equal(Number(row.n), 0)
    } finally {
      db.close()
    }
    await waitFor(async () => (await liveWorkers(n2)) === 0, 30_000, "n2 to stop the closed session's worker")
    const read = await client(n1.url, auth)('GET', `/v1/sessions/${sid}`)
    assert.equal(read.status, 200)
    assert.equal(read.body.state, 'closed')
    assert.equal(read.headers.get('x-vis-owner'), null, 'served where it landed')
    const refused = await client(n1.url, auth)('POST', `/v1/sessions/${sid}/blocks`, { code: '1' })
    assert.equal(refused.status, 409)
    assert.equal(refused.body.error.code, 'session.closed')
  })

  it('cluster mode refuses a node without PostgreSQL', async () => {
    await assert.rejects(
      startNode({ id: 'lonely', databaseUrl: '', leaseMs: LEASE_MS }),
      /cluster\.needs-postgres|needs the shared PostgreSQL store/,
    )
  })
})
