// The event stream as real clients meet it: many `eventsource` (npm) clients on one session at
// once, with the token in the URL (EventSource cannot set headers), half of them losing their
// connection mid-stream. Each must see every event exactly once and in order — the reconnect
// resumes from its Last-Event-ID — and all stop for good once the session closes (204).
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { EventSource } from 'eventsource'
import type { VisServer } from '../../src/http/server.js'
import { type client, tempHome, testServer, waitFor } from './helpers.js'

const { home } = tempHome('http-sse-clients')
const TOKEN = 'sse-clients-token-0123456789abcdef'
const CLIENTS = 24
const TYPES = ['block.started', 'output', 'block.finished', 'session.closed']

// A fetch whose first response body fails with a network error after `cut` bytes, as a dropped
// connection does; later connections are left whole. Records each connection's Last-Event-ID,
// and whether the cut happened (a stream shorter than `cut` ends whole).
function droppingFetch(cut: number | undefined, sent: (string | null)[], dropped: () => void): typeof fetch {
  return async (url, init) => {
    sent.push(new Headers(init?.headers).get('last-event-id'))
    const res = await fetch(url, init)
    if (cut === undefined || sent.length > 1 || !res.body) return res
    const reader = res.body.getReader()
    let seen = 0
    let lost = false
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        // The bytes before the cut were delivered (error() would discard what is still queued,
        // so it comes on the next read).
        if (lost) {
          await reader.cancel()
          dropped()
          return controller.error(new TypeError('network connection lost'))
        }
        const { done, value } = await reader.read()
        if (done) return controller.close()
        seen += value.length
        if (seen > cut) {
          lost = true
          return controller.enqueue(value.subarray(0, value.length - (seen - cut)))
        }
        controller.enqueue(value)
      },
    })
    return new Response(body, { status: res.status, headers: res.headers })
  }
}

describe('many EventSource clients', () => {
  let server: VisServer
  let call: ReturnType<typeof client>
  before(async () => {
    ;({ server, call } = await testServer({ home, pool: { size: 1 }, token: TOKEN }))
  })
  after(async () => {
    await server.close()
  })

  test('each sees every event once, in order, across a dropped connection, and stops at the close', async () => {
    const created = await call('POST', '/v1/sessions', {})
    assert.equal(created.status, 201, created.text)
    const id = created.body.id as string
    const clients = Array.from({ length: CLIENTS }, (_, i) => {
      const ids: number[] = []
      const sent: (string | null)[] = []
      // Even clients lose their first connection somewhere in the output.
      // (Past the first frames: block-started alone is about 300 bytes.)
      const cut = i % 2 === 0 ? 400 + i * 40 : undefined
      const client = { es: undefined as unknown as EventSource, ids, sent, cut, dropped: false }
      client.es = new EventSource(`${server.url}/v1/sessions/${id}/events?token=${TOKEN}`, {
        fetch: droppingFetch(cut, sent, () => {
          client.dropped = true
        }),
      })
      for (const t of TYPES) client.es.addEventListener(t, (e) => ids.push(Number(e.lastEventId)))
      return client
    })
    await waitFor(() => server.engine.subscriberCount(id) === CLIENTS, 30_000, 'every client to connect')
    const ran = await call('POST', `/v1/sessions/${id}/blocks`, {
      code: 'import time\nfor i in range(40):\n    print("line", i, flush=True)\n    time.sleep(0.01)',
      timeout_ms: 60_000,
    })
    assert.equal(ran.status, 200, ran.text)
    assert.equal((await call('DELETE', `/v1/sessions/${id}`)).status, 200)
    await waitFor(
      () => clients.every((c) => c.es.readyState === EventSource.CLOSED),
      60_000,
      'every EventSource to stop',
    )
    const last = server.engine.sessionView(id).last_event_id
    const all = Array.from({ length: last }, (_, k) => k + 1)
    for (const [i, c] of clients.entries()) {
      assert.deepEqual(c.ids, all, `client ${i} (cut at ${c.cut ?? 'never'})`)
      // The first connection carries no id; each reconnect resumes from the last one received,
      // and the one after the close gets 204 and is the last.
      assert.equal(c.sent[0], null, `client ${i}`)
      assert.equal(c.sent.at(-1), String(last), `client ${i}: ${c.sent}`)
      if (c.dropped) {
        assert.equal(c.sent.length, 3, `client ${i} reconnected once after the drop: ${c.sent}`)
        assert.ok(Number(c.sent[1]) >= 1 && Number(c.sent[1]) < last, `client ${i}: ${c.sent}`)
      } else {
        assert.equal(c.sent.length, 2, `client ${i}: ${c.sent}`)
      }
    }
    const drops = clients.filter((c) => c.dropped).length
    assert.ok(drops >= CLIENTS / 4, `only ${drops} connections were cut`)
    await waitFor(() => server.engine.subscriberCount(id) === 0, 10_000, 'no subscription left')
  })
})
