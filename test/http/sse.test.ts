// The event stream's edges against a real server on loopback: a replay point older than the
// retained events, and a client that stops reading.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startServer, type VisServer } from '../../src/http/server.js'
import { client, finishedFor, openEvents, python, stalledReader, tempHome, waitFor } from './helpers.js'

const { home, root } = tempHome('http-sse')
const RETENTION = 4

describe('SSE edges', () => {
  let server: VisServer
  let call: ReturnType<typeof client>
  before(async () => {
    server = await startServer({
      home,
      python,
      port: 0,
      pool: { size: 1 },
      eventRetention: RETENTION,
      heartbeatMs: 50,
      maxQueuedFrames: 4,
    })
    call = client(server.url)
  })
  after(async () => {
    await server.close()
  })

  const newSession = async () => {
    const r = await call('POST', '/v1/sessions', { roots: [root] })
    assert.equal(r.status, 201, r.text)
    return r.body.id as string
  }

  test('a Last-Event-ID older than the retained events gets a gap event, then what is kept', async () => {
    const id = await newSession()
    let last = ''
    for (let i = 0; i < 4; i++) {
      const b = await call('POST', `/v1/sessions/${id}/blocks`, { code: `print(${i})`, timeout_ms: 20_000 })
      assert.equal(b.status, 200, b.text)
      last = b.body.id
    }
    const newest = (await call('GET', `/v1/sessions/${id}`)).body.last_event_id as number
    assert.ok(newest > RETENTION + 1, `enough events to prune some (newest ${newest})`)

    const sse = await openEvents(`${server.url}/v1/sessions/${id}/events`, { 'Last-Event-ID': '1' })
    await sse.waitFor(finishedFor(last), 10_000, 'the last block-finished')
    const [gap, ...rest] = sse.events
    assert.equal(gap?.event, 'gap')
    const oldest = newest - RETENTION + 1
    assert.deepEqual(gap.data, { after: 1, oldest })
    assert.deepEqual(
      rest.map((e) => e.id),
      Array.from({ length: RETENTION }, (_, i) => oldest + i),
      'exactly the retained events, in order',
    )
    await sse.close()

    // A replay point still inside the retained window has no gap.
    const inside = await openEvents(`${server.url}/v1/sessions/${id}/events`, {
      'Last-Event-ID': String(oldest - 1),
    })
    await inside.waitFor(finishedFor(last), 10_000, 'the last block-finished')
    assert.ok(!inside.events.some((e) => e.event === 'gap'))
    assert.equal(inside.events[0]?.id, oldest)
    await inside.close()
    await call('DELETE', `/v1/sessions/${id}`)
  })

  test('a client that reads nothing is dropped once it falls too far behind', async () => {
    const id = await newSession()
    const url = new URL(server.url)
    // A raw socket that sends the request and never reads the response.
    const { socket } = await stalledReader(url, id)
    try {
      await waitFor(() => server.engine.subscriberCount(id) === 1, 5000, 'the stream to subscribe')

      // Blocks of ~1 MB of output each (under the per-block cap) until the stream, backed up
      // behind the full loopback socket buffers, gives up on the client.
      let last = ''
      for (let i = 0; i < 64 && server.engine.subscriberCount(id) > 0; i++) {
        const b = await call('POST', `/v1/sessions/${id}/blocks`, {
          code: 'import sys\nsys.stdout.write("x" * 1_000_000)',
          timeout_ms: 60_000,
        })
        assert.equal(b.body.status, 'done', b.text.slice(0, 500))
        last = b.body.id
      }
      await waitFor(() => server.engine.subscriberCount(id) === 0, 10_000, 'the slow client to be dropped')
      assert.ok(!socket.destroyed, 'the client did not go away by itself')

      // A client that reads still gets the stream.
      const reader = await openEvents(`${server.url}/v1/sessions/${id}/events`)
      await reader.waitFor(finishedFor(last), 20_000, 'the last block-finished')
      assert.equal(server.engine.subscriberCount(id), 1)
      await reader.close()
    } finally {
      socket.destroy()
    }
    await call('DELETE', `/v1/sessions/${id}`)
  })
})
