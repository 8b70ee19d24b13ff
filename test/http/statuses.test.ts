// Statuses and shapes a client can rely on: an event stream that ends, queued blocks (their own
// URL, cancel, a timeout that covers the wait, interrupt by name), idempotency keys reused for
// other code, ids and roots refused with the reason, query parameters named.
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { EventSource } from 'eventsource'
import type { VisServer } from '../../src/http/server.js'
import { type client, finishedFor, openEvents, tempHome, testServer, waitFor } from './helpers.js'

const { home, root } = tempHome('http-statuses')

describe('honest statuses', () => {
  let server: VisServer
  let call: ReturnType<typeof client>
  before(async () => {
    ;({ server, call } = await testServer({ home, pool: { size: 1 }, interruptAckMs: 2000 }))
  })
  after(async () => {
    await server.close()
  })

  const newSession = async () => {
    const r = await call('POST', '/v1/sessions', { roots: [root] })
    assert.equal(r.status, 201, r.text)
    return r.body.id as string
  }
  const async = { prefer: 'respond-async' }
  const SLOW = 'import time\nprint("started", flush=True)\nwhile True:\n    time.sleep(0.02)'

  test('after session-closed the events route answers 204, so an EventSource stops reconnecting', async () => {
    const id = await newSession()
    await call('POST', `/v1/sessions/${id}/blocks`, { code: 'print("hi")' })
    const requests: (string | null)[] = []
    const types: string[] = []
    const es = new EventSource(`${server.url}/v1/sessions/${id}/events`, {
      fetch: (url, init) => {
        requests.push(new Headers(init?.headers).get('last-event-id'))
        return fetch(url, init)
      },
    })
    for (const t of ['block.started', 'output', 'block.finished', 'session.closed']) {
      es.addEventListener(t, () => types.push(t))
    }
    await waitFor(() => types.includes('block.finished'), 20_000, 'the replay')
    assert.equal((await call('DELETE', `/v1/sessions/${id}`)).status, 200)
    await waitFor(() => es.readyState === EventSource.CLOSED, 20_000, 'the EventSource to give up')
    assert.deepEqual(types, ['block.started', 'output', 'block.finished', 'session.closed'])
    const last = String(server.engine.sessionView(id).last_event_id)
    assert.deepEqual(requests, [null, last], 'one reconnect, answered 204, and no more')
    const done = await call('GET', `/v1/sessions/${id}/events`, undefined, { 'Last-Event-ID': last })
    assert.equal(done.status, 204)
    // A client that missed the end still gets it, then the stream ends.
    const late = await openEvents(`${server.url}/v1/sessions/${id}/events?after=1`)
    await waitFor(() => late.ended, 20_000, 'the replayed stream to end')
    assert.equal(late.events.at(-1)?.event, 'session.closed')
  })

  test('a block behind another is queued, has its own URL, and can be cancelled; the running one cannot', async () => {
    const id = await newSession()
    const sse = await openEvents(`${server.url}/v1/sessions/${id}/events`)
    const a = await call('POST', `/v1/sessions/${id}/blocks`, { code: SLOW }, async)
    assert.equal(a.status, 202)
    await sse.waitFor((evs) => evs.some((e) => e.event === 'output'), 20_000, 'A to run')
    const b = await call('POST', `/v1/sessions/${id}/blocks`, { code: 'b_ran = True' }, async)
    assert.equal(b.status, 202)
    assert.equal(b.body.status, 'queued')
    const where = b.headers.get('location')
    assert.equal(where, `/v1/sessions/${id}/blocks/${b.body.id}`)
    assert.equal((await call('GET', where!)).body.status, 'queued')
    assert.equal((await call('GET', `/v1/sessions/${id}/blocks/${a.body.id}`)).body.status, 'running')
    const detail = (await call('GET', `/v1/sessions/${id}`)).body
    assert.deepEqual(
      detail.blocks.map((x: { status: string }) => x.status),
      ['running', 'queued'],
    )
    assert.equal(detail.busy, true)

    const cancelled = await call('POST', `/v1/sessions/${id}/blocks/${b.body.id}/cancel`)
    assert.equal(cancelled.status, 200, cancelled.text)
    assert.equal(cancelled.body.status, 'done')
    assert.equal(cancelled.body.error.code, 'block.cancelled')
    assert.equal(cancelled.body.timed_out, false)
    await sse.waitFor(finishedFor(b.body.id), 5000, 'B finished event')
    const again = await call('POST', `/v1/sessions/${id}/blocks/${b.body.id}/cancel`)
    assert.equal(again.status, 409)
    assert.equal(again.body.error.code, 'block.not-queued')
    const running = await call('POST', `/v1/sessions/${id}/blocks/${a.body.id}/cancel`)
    assert.equal(running.status, 409)
    assert.match(running.body.error.message, /interrupt it instead/)
    const elsewhere = await call('GET', `/v1/sessions/${await newSession()}/blocks/${a.body.id}`)
    assert.equal(elsewhere.status, 404)
    assert.equal(elsewhere.body.error.code, 'block.not-found')

    // Interrupt by name: a queued block is cancelled, a finished one is left alone, A keeps running.
    const c = await call('POST', `/v1/sessions/${id}/blocks`, { code: 'c_ran = True' }, async)
    const byName = await call('POST', `/v1/sessions/${id}/interrupt`, { block_id: c.body.id })
    assert.deepEqual(byName.body, { landed: false, retired: false, cancelled: true, block_id: c.body.id })
    const stale = await call('POST', `/v1/sessions/${id}/interrupt`, { block_id: b.body.id })
    assert.deepEqual(stale.body, { landed: false, retired: false, cancelled: false, block_id: b.body.id })
    assert.equal((await call('GET', `/v1/sessions/${id}/blocks/${a.body.id}`)).body.status, 'running')
    const hit = await call('POST', `/v1/sessions/${id}/interrupt`, { block_id: a.body.id })
    assert.equal(hit.body.landed, true)
    await sse.waitFor(finishedFor(a.body.id))
    const check = await call('POST', `/v1/sessions/${id}/blocks`, {
      code: '[name in globals() for name in ("b_ran", "c_ran")]',
    })
    assert.deepEqual(check.body.result, [false, false], 'cancelled blocks never ran')
    await sse.close()
  })

  test('closing a session ends its running block and the queued ones as session.closed, saying which', async () => {
    const id = await newSession()
    const sse = await openEvents(`${server.url}/v1/sessions/${id}/events`)
    // The running one is waited on, as a client that sent it without respond-async does.
    const waiting = call('POST', `/v1/sessions/${id}/blocks`, { code: SLOW })
    await sse.waitFor((evs) => evs.some((e) => e.event === 'output'), 20_000, 'the block to run')
    const queued = await call('POST', `/v1/sessions/${id}/blocks`, { code: 'never = 1' }, async)
    assert.equal(queued.body.status, 'queued')
    assert.equal((await call('DELETE', `/v1/sessions/${id}`)).status, 200)
    const ran = await waiting
    assert.equal(ran.status, 200, ran.text)
    assert.equal(ran.body.error.code, 'session.closed')
    assert.match(ran.body.error.message, /closed while this block ran/)
    assert.equal(ran.body.stdout, 'started\n', 'what it printed before is kept')
    const never = await call('GET', `/v1/sessions/${id}/blocks/${queued.body.id}`)
    assert.equal(never.body.status, 'done')
    assert.equal(never.body.error.code, 'session.closed')
    assert.match(never.body.error.message, /closed before this block started; it never ran/)
    await sse.close()
  })

  test('timeout_ms covers the wait: a block still queued when it runs out never runs', async () => {
    const id = await newSession()
    const sse = await openEvents(`${server.url}/v1/sessions/${id}/events`)
    const a = await call('POST', `/v1/sessions/${id}/blocks`, { code: SLOW, timeout_ms: 60_000 }, async)
    await sse.waitFor((evs) => evs.some((e) => e.event === 'output'), 20_000, 'A to run')
    const t0 = Date.now()
    const b = await call('POST', `/v1/sessions/${id}/blocks`, { code: 'b_ran = True', timeout_ms: 300 })
    assert.equal(b.status, 200)
    assert.ok(Date.now() - t0 < 30_000, 'answered without waiting for A')
    assert.equal(b.body.status, 'done')
    assert.equal(b.body.timed_out, true)
    assert.equal(b.body.error.code, 'block.queue-timeout')
    assert.match(b.body.error.message, /300 ms.*never ran/)
    assert.equal((await call('GET', `/v1/sessions/${id}/blocks/${a.body.id}`)).body.status, 'running')
    await call('POST', `/v1/sessions/${id}/interrupt`)
    await sse.waitFor(finishedFor(a.body.id))
    assert.equal(
      (await call('POST', `/v1/sessions/${id}/blocks`, { code: '"b_ran" in globals()' })).body.result,
      false,
    )
    await sse.close()
  })

  test('an Idempotency-Key reused for a different body is 422, never a replay of the first block', async () => {
    const id = await newSession()
    const key = { 'Idempotency-Key': 'k-1' }
    const first = await call('POST', `/v1/sessions/${id}/blocks`, { code: 'x = 1' }, key)
    assert.equal(first.status, 200)
    const same = await call('POST', `/v1/sessions/${id}/blocks`, { code: 'x = 1' }, key)
    assert.equal(same.body.id, first.body.id)
    assert.equal(same.headers.get('idempotent-replayed'), 'true')
    const other = await call('POST', `/v1/sessions/${id}/blocks`, { code: 'x = 2' }, key)
    assert.equal(other.status, 422)
    assert.equal(other.body.error.code, 'idempotency.key-reused')
    assert.match(other.body.error.message, /k-1.*different block/)
    assert.equal(other.body.error.details.blockId, first.body.id)
    const turn = await call('POST', `/v1/sessions/${id}/blocks`, { code: 'x = 1', turn_id: 't1' }, key)
    assert.equal(turn.status, 422, 'the turn is part of the request')
    assert.equal((await call('POST', `/v1/sessions/${id}/blocks`, { code: 'x' })).body.result, 1)
  })

  test('ids that URL normalisation would change and roots the jail cannot mount are 400s that say why', async () => {
    for (const bad of ['.', '..', '...']) {
      const r = await call('POST', '/v1/sessions', { id: bad })
      assert.equal(r.status, 400, bad)
      assert.equal(r.body.error.details.issues[0].path, 'id')
      assert.match(r.body.error.details.issues[0].message, /not only dots/)
    }
    const dotted = await call('POST', '/v1/sessions', { id: 'v1.2-ok' })
    assert.equal(dotted.status, 201)
    assert.equal((await call('GET', '/v1/sessions/v1.2-ok')).body.id, 'v1.2-ok')

    const slash = await call('POST', '/v1/sessions', { roots: ['/'] })
    assert.equal(slash.status, 400)
    assert.equal(slash.body.error.code, 'policy.root-too-broad')
    assert.match(slash.body.error.message, /"\/" cannot be a root: the jail/)
    const file = join(root, 'a-file.txt')
    writeFileSync(file, 'x')
    const notDir = await call('POST', '/v1/sessions', { roots: [file] })
    assert.equal(notDir.status, 400)
    assert.equal(notDir.body.error.code, 'policy.root-not-directory')
    for (const r of [slash, notDir]) {
      assert.ok(!r.text.includes(home), 'no path of the server leaks')
      assert.ok(!/worker-\d+\.log/.test(r.text))
    }
  })

  test('a bad query parameter is reported as that parameter', async () => {
    const limit = await call('GET', '/v1/sessions?limit=abc')
    assert.equal(limit.status, 400)
    assert.equal(limit.body.error.code, 'http.invalid-query')
    assert.deepEqual(limit.body.error.details.parameters, ['limit'])
    assert.match(limit.body.error.message, /^Invalid query parameter limit: /)
    const unknown = await call('GET', '/v1/sessions?colour=red')
    assert.deepEqual(unknown.body.error.details.parameters, ['colour'])
    assert.match(unknown.body.error.message, /colour: unknown query parameter; known: state, limit, offset/)
    const id = await newSession()
    const after = await call('GET', `/v1/sessions/${id}/events?after=soon`)
    assert.equal(after.status, 400)
    assert.equal(after.body.error.code, 'http.invalid-query')
    assert.deepEqual(after.body.error.details.parameters, ['after'])
  })
})
