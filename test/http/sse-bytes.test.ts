// The event stream's byte bound against a real server on loopback: a client that stops reading is
// cut once the frames queued for it weigh more than maxQueuedBytes (its connection closed), while
// a client that reads, even one replaying a history many times that size, gets every event.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startServer, type VisServer } from '../../src/http/server.js'
import { client, finishedFor, openEvents, python, stalledReader, tempHome, waitFor } from './helpers.js'

const { home, root } = tempHome('http-sse-bytes')
const MAX_BYTES = 2 * 1024 * 1024
// ~1 MB printed and a ~1 MB value: each block's frames weigh about the whole bound.
const HEAVY = `print('o' * 1_000_000)\n'v' * 1_000_000`

describe('SSE byte bound', () => {
  let server: VisServer
  let call: ReturnType<typeof client>
  before(async () => {
    server = await startServer({ home, python, port: 0, pool: { size: 1 }, maxQueuedBytes: MAX_BYTES })
    call = client(server.url)
  })
  after(async () => {
    await server.close()
  })

  test('a stalled reader is cut by bytes, its connection closed; a reader that reads gets all', async () => {
    const id = (await call('POST', '/v1/sessions', { roots: [root] })).body.id as string
    const url = new URL(server.url)
    const { socket, closed } = await stalledReader(url, id)
    // A reader that keeps up, on the same session at the same time.
    const reader = await openEvents(`${server.url}/v1/sessions/${id}/events`)
    try {
      await waitFor(() => server.engine.subscriberCount(id) === 2, 5000, 'both streams to subscribe')
      // Each block's frames are ~2 MB; far fewer than the 10 000 frames of the count bound.
      let last = ''
      for (let i = 0; i < 12 && server.engine.subscriberCount(id) > 1; i++) {
        const b = await call('POST', `/v1/sessions/${id}/blocks`, { code: HEAVY, timeout_ms: 60_000 })
        assert.equal(b.body.status, 'done', b.text.slice(0, 300))
        last = b.body.id
      }
      await waitFor(() => server.engine.subscriberCount(id) === 1, 10_000, 'the stalled client to be dropped')
      // The server closed the connection: once the client reads again it gets what the socket
      // held, then the end (a paused socket does not see the close before that).
      socket.resume()
      await waitFor(closed, 10_000, "the server to close the stalled client's connection")
      await reader.waitFor(finishedFor(last), 30_000, 'the last block-finished on the reading stream')
      const finished = reader.events.filter((e) => e.event === 'block.finished').length
      const ran = (await call('GET', `/v1/sessions/${id}`)).body.blocks.length as number
      assert.equal(finished, ran, 'the reader saw every block finish')
    } finally {
      socket.destroy()
      await reader.close()
    }
  })

  test('a reconnect replaying a history many times the bound is not cut', async () => {
    const id = (await call('POST', '/v1/sessions', { roots: [root] })).body.id as string
    let last = ''
    for (let i = 0; i < 6; i++) {
      const b = await call('POST', `/v1/sessions/${id}/blocks`, { code: HEAVY, timeout_ms: 60_000 })
      assert.equal(b.body.status, 'done', b.text.slice(0, 300))
      last = b.body.id
    }
    const sse = await openEvents(`${server.url}/v1/sessions/${id}/events`, { 'Last-Event-ID': '0' })
    try {
      await sse.waitFor(finishedFor(last), 30_000, 'the last block-finished of the replay')
      const ids = sse.events.map((e) => e.id!)
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => a - b),
        'in order',
      )
      assert.equal(new Set(ids).size, ids.length, 'each event once')
      assert.equal(sse.events.filter((e) => e.event === 'block.finished').length, 6)
      // Live events after the replay still come.
      const b = await call('POST', `/v1/sessions/${id}/blocks`, { code: 'print(7)', timeout_ms: 60_000 })
      await sse.waitFor(finishedFor(b.body.id), 30_000, 'the live block-finished after the replay')
      assert.equal(server.engine.subscriberCount(id), 1)
    } finally {
      await sse.close()
    }
  })
})
