// The HTTP API against a real server on a random loopback port, real workers, real SQLite.
import assert from 'node:assert/strict'
import { request } from 'node:http'
import { after, before, describe, test } from 'node:test'
// Every mounted route: the core table and the agent's (src/http/agent-routes.ts).
import { MOUNTED_ROUTES as ROUTES } from '../../src/http/app.js'
import { startServer, type VisServer } from '../../src/http/server.js'
import { client, finishedFor, openEvents, python, tempHome, waitFor } from './helpers.js'

const { home, root } = tempHome('http-api')

// node:http, because fetch gives up on a response that arrives before its upload finished.
function rawPost(url: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d) => {
        text += d
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
    })
    req.on('error', (err) => {
      if (!req.destroyed) reject(err)
    })
    req.end(body)
  })
}

describe('the HTTP API', () => {
  let server: VisServer
  let call: ReturnType<typeof client>
  before(async () => {
    server = await startServer({
      home,
      python,
      port: 0,
      pool: { size: 1 },
      interruptAckMs: 2000,
      heartbeatMs: 100,
    })
    call = client(server.url)
  })
  after(async () => {
    await server.close()
  })

  const newSession = async (body: Record<string, unknown> = { roots: [root] }) => {
    const r = await call('POST', '/v1/sessions', body)
    assert.equal(r.status, 201, r.text)
    return r.body.id as string
  }

  test('a session lives: create, list, run, get with its blocks, close, refuse blocks after', async () => {
    const created = await call('POST', '/v1/sessions', { roots: [root], title: 'lifecycle' })
    assert.equal(created.status, 201)
    const id = created.body.id
    assert.equal(created.headers.get('location'), `/v1/sessions/${id}`)
    assert.equal(created.body.worker, 'live')
    assert.deepEqual(created.body.policy.roots, [root])

    const listed = await call('GET', '/v1/sessions?state=open')
    assert.ok(listed.body.sessions.some((s: { id: string }) => s.id === id))

    const r1 = await call('POST', `/v1/sessions/${id}/blocks`, {
      code: 'n = 20\nprint("n is", n)\nvis_attach_bytes("hello", "note.txt")',
      timeout_ms: 20_000,
    })
    assert.equal(r1.status, 200, r1.text)
    assert.equal(r1.body.status, 'done')
    assert.equal(r1.body.stdout, 'n is 20\n')
    assert.equal(r1.body.attachments.length, 1)
    const r2 = await call('POST', `/v1/sessions/${id}/blocks`, { code: 'n * 2 + 2', timeout_ms: 20_000 })
    assert.equal(r2.body.result, 42)
    const r3 = await call('POST', `/v1/sessions/${id}/blocks`, { code: '1/0', timeout_ms: 20_000 })
    assert.equal(r3.status, 200)
    assert.match(r3.body.error.message, /division by zero/)

    const att = r1.body.attachments[0]
    const bytes = await call('GET', att.url)
    assert.equal(bytes.status, 200)
    assert.equal(bytes.text, 'hello')
    assert.equal(bytes.headers.get('content-type'), 'text/plain')
    const other = await newSession()
    assert.equal((await call('GET', `/v1/sessions/${other}/attachments/${att.id}`)).status, 404)

    const got = await call('GET', `/v1/sessions/${id}`)
    assert.equal(got.status, 200)
    assert.equal(got.body.title, 'lifecycle')
    assert.deepEqual(
      got.body.blocks.map((b: { position: number; status: string }) => [b.position, b.status]),
      [
        [1, 'done'],
        [2, 'done'],
        [3, 'done'],
      ],
    )

    const closed = await call('DELETE', `/v1/sessions/${id}`)
    assert.equal(closed.status, 200)
    assert.equal(closed.body.state, 'closed')
    const refused = await call('POST', `/v1/sessions/${id}/blocks`, { code: '1', timeout_ms: 1000 })
    assert.equal(refused.status, 409)
    assert.equal(refused.body.error.code, 'session.closed')
    // The history stays.
    assert.equal((await call('GET', `/v1/sessions/${id}`)).body.blocks.length, 3)
    assert.equal((await call('GET', '/v1/sessions/nope')).status, 404)
    await call('DELETE', `/v1/sessions/${other}`)
  })

  test('a block that prints slowly streams over SSE in order, with monotonic ids and heartbeats', async () => {
    const id = await newSession()
    const sse = await openEvents(`${server.url}/v1/sessions/${id}/events`)
    assert.equal(sse.status, 200)
    assert.match(sse.headers.get('content-type') ?? '', /text\/event-stream/)
    const sub = await call(
      'POST',
      `/v1/sessions/${id}/blocks`,
      {
        code: 'import time\nfor i in range(5):\n    print("tick", i, flush=True)\n    time.sleep(0.12)',
        timeout_ms: 20_000,
      },
      { prefer: 'respond-async' },
    )
    assert.equal(sub.status, 202)
    // Accepted, not started yet: its block-started event says when it runs.
    assert.equal(sub.body.status, 'queued')
    await sse.waitFor(finishedFor(sub.body.id), 20_000, 'block.finished')
    const types = sse.events.map((e) => e.event)
    assert.equal(types[0], 'block.started')
    assert.equal(types.at(-1), 'block.finished')
    const outputs = sse.events.filter((e) => e.event === 'output')
    // Slow prints arrive as separate events, before the block finishes, in order.
    assert.ok(outputs.length >= 3, `expected streamed chunks, got ${outputs.length}`)
    assert.equal(outputs.map((e) => e.data.data.data).join(''), 'tick 0\ntick 1\ntick 2\ntick 3\ntick 4\n')
    const ids = sse.events.map((e) => e.id!)
    assert.deepEqual(
      ids,
      ids.map((_, i) => ids[0]! + i),
      'ids are consecutive',
    )
    await sse.waitFor(() => sse.comments.includes('heartbeat'), 5000, 'a heartbeat')
    assert.equal(server.engine.subscriberCount(id), 1)
    await sse.close()
    // A client that went away is noticed and its subscription dropped.
    await waitFor(() => server.engine.subscriberCount(id) === 0, 5000, 'the dead client to be dropped')
    await call('DELETE', `/v1/sessions/${id}`)
  })

  test('reconnecting with Last-Event-ID replays exactly the missed events', async () => {
    const id = await newSession()
    const first = await openEvents(`${server.url}/v1/sessions/${id}/events`)
    const b1 = await call('POST', `/v1/sessions/${id}/blocks`, { code: 'print("one")', timeout_ms: 20_000 })
    await first.waitFor(finishedFor(b1.body.id))
    const seen = first.events.map((e) => e.id!)
    const lastSeen = seen.at(-1)!
    await first.close()

    // Missed while disconnected.
    const b2 = await call('POST', `/v1/sessions/${id}/blocks`, {
      code: 'print("two")\nprint("three")',
      timeout_ms: 20_000,
    })
    const b3 = await call('POST', `/v1/sessions/${id}/blocks`, { code: 'x = 3', timeout_ms: 20_000 })

    const again = await openEvents(`${server.url}/v1/sessions/${id}/events`, {
      'Last-Event-ID': String(lastSeen),
    })
    await again.waitFor(finishedFor(b3.body.id))
    const everything = await openEvents(`${server.url}/v1/sessions/${id}/events`)
    await everything.waitFor(finishedFor(b3.body.id))
    const expected = everything.events.filter((e) => e.id! > lastSeen)
    assert.deepEqual(again.events, expected, 'exactly the events after Last-Event-ID, nothing twice')
    assert.ok(again.events.some((e) => e.event === 'block.started' && e.data.data.block_id === b2.body.id))
    assert.deepEqual(
      everything.events.map((e) => e.id),
      [...seen, ...expected.map((e) => e.id)],
    )
    // The query form works for clients that cannot set headers.
    const viaQuery = await openEvents(`${server.url}/v1/sessions/${id}/events?after=${lastSeen}`)
    await viaQuery.waitFor(finishedFor(b3.body.id))
    assert.deepEqual(viaQuery.events, expected)
    for (const s of [again, everything, viaQuery]) await s.close()
    const bad = await call('GET', `/v1/sessions/${id}/events`, undefined, { 'Last-Event-ID': 'abc' })
    assert.equal(bad.status, 400)
    assert.equal(bad.body.error.code, 'http.invalid-header')
    await call('DELETE', `/v1/sessions/${id}`)
  })

  test('a retried submission with the same Idempotency-Key runs once and returns the first block', async () => {
    const id = await newSession()
    await call('POST', `/v1/sessions/${id}/blocks`, { code: 'runs = 0', timeout_ms: 20_000 })
    const body = { code: 'runs += 1\nprint("ran", runs)', timeout_ms: 20_000 }
    const key = { 'Idempotency-Key': 'retry-1' }
    const [a, b] = await Promise.all([
      call('POST', `/v1/sessions/${id}/blocks`, body, key),
      call('POST', `/v1/sessions/${id}/blocks`, body, key),
    ])
    const c = await call('POST', `/v1/sessions/${id}/blocks`, body, key)
    assert.equal(a.body.id, b.body.id)
    assert.equal(a.body.id, c.body.id)
    assert.equal(c.headers.get('idempotent-replayed'), 'true')
    assert.equal(c.body.stdout, 'ran 1\n')
    const count = await call('POST', `/v1/sessions/${id}/blocks`, { code: 'runs', timeout_ms: 20_000 })
    assert.equal(count.body.result, 1, 'the block ran exactly once')
    const blocks = (await call('GET', `/v1/sessions/${id}`)).body.blocks
    assert.equal(blocks.length, 3)
    await call('DELETE', `/v1/sessions/${id}`)
  })

  test('interrupt over HTTP stops a running block; the session keeps working', async () => {
    const id = await newSession()
    const sse = await openEvents(`${server.url}/v1/sessions/${id}/events`)
    const sub = await call(
      'POST',
      `/v1/sessions/${id}/blocks`,
      {
        code: 'import time\nprint("looping", flush=True)\nwhile True:\n    time.sleep(0.02)',
        timeout_ms: 120_000,
      },
      { Prefer: 'respond-async' },
    )
    assert.equal(sub.status, 202)
    // Once it printed, the loop is certainly running in the interpreter.
    await sse.waitFor((evs) => evs.some((e) => e.event === 'output'), 20_000, 'the block to print')
    const r = await call('POST', `/v1/sessions/${id}/interrupt`)
    assert.equal(r.status, 200)
    assert.deepEqual(r.body, { landed: true, retired: false, cancelled: false, block_id: sub.body.id })
    await sse.waitFor(finishedFor(sub.body.id))
    // The interrupt's event is appended when the worker acknowledges the interrupt, which can
    // reach the host just after the block's own reply: wait for it rather than assume the order.
    // Either way it names the block it interrupted.
    await sse.waitFor(
      (evs) => evs.some((e) => e.event === 'interrupt' && e.data.data.landed === true),
      10_000,
      'the landed interrupt event',
    )
    const landed = sse.events.find((e) => e.event === 'interrupt' && e.data.data.landed === true)
    assert.equal(landed?.data.data.block_id, sub.body.id)
    const block = (await call('GET', `/v1/sessions/${id}`)).body.blocks[0]
    assert.equal(block.status, 'done')
    assert.match(block.error.code, /interrupt/)
    assert.equal((await call('POST', `/v1/sessions/${id}/blocks`, { code: '6 * 7' })).body.result, 42)
    // Idle: nothing to interrupt.
    assert.deepEqual((await call('POST', `/v1/sessions/${id}/interrupt`)).body, {
      landed: false,
      retired: false,
      cancelled: false,
      block_id: null,
    })
    const timed = await call('POST', `/v1/sessions/${id}/blocks`, {
      code: 'import time\nwhile True:\n    time.sleep(0.02)',
      timeout_ms: 300,
    })
    assert.equal(timed.body.timed_out, true)
    await sse.close()
    await call('DELETE', `/v1/sessions/${id}`)
  })

  test('invalid requests get the one error envelope with the right status', async () => {
    const id = await newSession()
    const cases: [string, string, unknown, Record<string, string>, number, string][] = [
      ['POST', '/v1/sessions', '{not json', {}, 400, 'http.invalid-json'],
      ['POST', '/v1/sessions', { roots: 'not-a-list' }, {}, 400, 'http.invalid-body'],
      ['POST', '/v1/sessions', { surprise: true }, {}, 400, 'http.invalid-body'],
      ['POST', '/v1/sessions', { roots: ['relative/dir'] }, {}, 400, 'http.invalid-body'],
      ['POST', '/v1/sessions', { roots: [`${root}/missing`] }, {}, 400, 'confine.path-missing'],
      ['POST', `/v1/sessions/${id}/blocks`, { code: 5 }, {}, 400, 'http.invalid-body'],
      ['POST', `/v1/sessions/${id}/blocks`, { code: '1', timeout_ms: -1 }, {}, 400, 'http.invalid-body'],
      ['POST', `/v1/sessions/${id}/blocks`, {}, {}, 400, 'http.invalid-body'],
      [
        'POST',
        `/v1/sessions/${id}/blocks`,
        { code: '1' },
        { 'Idempotency-Key': 'x'.repeat(300) },
        400,
        'http.invalid-header',
      ],
      ['POST', '/v1/sessions/missing/blocks', { code: '1' }, {}, 404, 'session.not-found'],
      ['GET', '/v1/sessions?limit=0', undefined, {}, 400, 'http.invalid-query'],
      ['GET', '/v1/nowhere', undefined, {}, 404, 'http.not-found'],
      ['PUT', '/v1/sessions', undefined, {}, 405, 'http.method-not-allowed'],
    ]
    for (const [method, path, body, headers, status, code] of cases) {
      const r = await call(method, path, body, headers)
      assert.equal(r.status, status, `${method} ${path}: ${r.text.slice(0, 200)}`)
      assert.equal(r.body.error.code, code, `${method} ${path}`)
      assert.equal(typeof r.body.error.message, 'string')
      assert.ok('details' in r.body.error)
    }
    // An oversized body is refused from its Content-Length, before it is read.
    const big = await rawPost(
      `${server.url}/v1/sessions/${id}/blocks`,
      JSON.stringify({ code: 'x'.repeat(1_100_000) }),
    )
    assert.equal(big.status, 413)
    assert.equal(JSON.parse(big.body).error.code, 'http.body-too-large')
    const r = await call('POST', '/v1/sessions', { roots: 'not-a-list' })
    assert.deepEqual(r.body.error.details.issues[0].path, 'roots')
    // A valid session survives all of that.
    assert.equal((await call('POST', `/v1/sessions/${id}/blocks`, { code: '2 + 2' })).body.result, 4)
    await call('DELETE', `/v1/sessions/${id}`)
  })

  test('the OpenAPI document lists every route the server mounts, and each answers', async () => {
    const doc = (await call('GET', '/v1/openapi.json')).body
    assert.equal(doc.openapi, '3.1.0')
    const documented = new Set<string>()
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(ops)) documented.add(`${method.toUpperCase()} ${path}`)
    }
    const mounted = new Set(
      ROUTES.map((r) => `${r.method.toUpperCase()} ${r.path.replace(/:(\w+)/g, '{$1}')}`),
    )
    mounted.add('GET /v1/openapi.json')
    assert.deepEqual([...documented].sort(), [...mounted].sort())
    const issue = [
      'POST /v1/sessions',
      'GET /v1/sessions',
      'GET /v1/sessions/{id}',
      'DELETE /v1/sessions/{id}',
      'POST /v1/sessions/{id}/blocks',
      'GET /v1/sessions/{id}/events',
      'POST /v1/sessions/{id}/interrupt',
      'GET /v1/sessions/{id}/attachments/{aid}',
      'GET /v1/health',
      'GET /v1/doctor',
      'GET /metrics',
    ]
    for (const route of issue) assert.ok(documented.has(route), `${route} is documented`)
    const runBlock = doc.paths['/v1/sessions/{id}/blocks'].post
    // Request bodies are named schemas.
    const ref = runBlock.requestBody.content['application/json'].schema.$ref as string
    assert.equal(ref, '#/components/schemas/RunBlockRequest')
    const body = doc.components.schemas.RunBlockRequest
    assert.deepEqual(body.required, ['code'])
    assert.equal(body.properties.timeout_ms.type, 'integer')
    assert.ok(runBlock.responses['202'])
    // Every documented route without path parameters is really mounted (no 404 from the router).
    for (const route of issue.filter((r) => r.startsWith('GET') && !r.includes('{'))) {
      const r = await call('GET', route.slice(4))
      assert.equal(r.status, 200, route)
    }
  })

  test('health, doctor and Prometheus metrics', async () => {
    const health = await call('GET', '/v1/health')
    assert.equal(health.body.ok, true)
    const doctor = await call('GET', '/v1/doctor')
    assert.ok(Array.isArray(doctor.body.checks) && doctor.body.checks.length > 0)
    const egress = doctor.body.checks.filter((c: { id: string }) => c.id.startsWith('egress.'))
    assert.deepEqual(
      egress.map((c: { id: string; level: string }) => [c.id, c.level]),
      [
        ['egress.path', 'info'],
        ['egress.floor', 'info'],
      ],
    )
    const metrics = await call('GET', '/metrics')
    assert.match(metrics.headers.get('content-type') ?? '', /text\/plain; version=0\.0\.4/)
    for (const name of [
      'vis_sessions',
      'vis_blocks_total',
      'vis_block_duration_seconds_bucket',
      'vis_worker_restarts_total',
      'vis_pool_size',
    ]) {
      assert.match(metrics.text, new RegExp(`^${name}`, 'm'), name)
    }
    const count = Number(/^vis_block_duration_seconds_count (\d+)$/m.exec(metrics.text)?.[1])
    assert.ok(count >= 10, `blocks observed: ${count}`)
    assert.match(metrics.text, /^vis_pool_size 1$/m)
  })
})
