// The bytes queued for all event streams together (src/http/sse-budget.ts), against a real server
// on loopback: stalled readers of one session are cut once their frames together pass the
// session's bound, the one furthest behind first, while a reader of the same session that keeps
// reading stays connected the whole time and gets every event.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startServer, type VisServer } from '../../src/http/server.js'
import { client, finishedFor, openEvents, python, stalledReader, tempHome, waitFor } from './helpers.js'

const { home, root } = tempHome('http-sse-budget')
const PER_SESSION = 6 * 1024 * 1024
const STALLED = 3
// ~1 MB printed and a ~1 MB value: each block's frames weigh ~2 MB per stream.
const HEAVY = `print('o' * 1_000_000)\n'v' * 1_000_000`

describe('SSE bytes bounded across streams', () => {
  let server: VisServer
  let call: ReturnType<typeof client>
  before(async () => {
    // The per-stream bound is left far above the session's, so only the shared bound can cut.
    server = await startServer({
      home,
      python,
      port: 0,
      pool: { size: 1 },
      maxQueuedBytes: 64 * 1024 * 1024,
      maxQueuedBytesPerSession: PER_SESSION,
    })
    call = client(server.url)
  })
  after(async () => {
    await server.close()
  })

  test('stalled readers of a session are cut together; a reader that reads keeps its stream', async () => {
    const id = (await call('POST', '/v1/sessions', { roots: [root] })).body.id as string
    const url = new URL(server.url)
    const reader = await openEvents(`${server.url}/v1/sessions/${id}/events`)
    const stalled: Array<Awaited<ReturnType<typeof stalledReader>>> = []
    try {
      for (let i = 0; i < STALLED; i++) stalled.push(await stalledReader(url, id))
      await waitFor(
        () => server.engine.subscriberCount(id) === STALLED + 1,
        5000,
        'every stream to subscribe',
      )
      // Alone, each stalled stream could hold 64 MiB; together they may hold 6 MiB: a few blocks.
      let last = ''
      for (let i = 0; i < 12 && server.engine.subscriberCount(id) > 1; i++) {
        const b = await call('POST', `/v1/sessions/${id}/blocks`, { code: HEAVY, timeout_ms: 60_000 })
        assert.equal(b.body.status, 'done', b.text.slice(0, 300))
        last = b.body.id
      }
      await waitFor(() => server.engine.subscriberCount(id) === 1, 10_000, 'every stalled reader to be cut')
      for (const s of stalled) s.socket.resume()
      await waitFor(
        () => stalled.every((s) => s.closed()),
        10_000,
        "the stalled readers' connections to close",
      )
      await reader.waitFor(finishedFor(last), 30_000, 'the last block-finished on the reading stream')
      assert.equal(reader.ended, false, 'the reading stream was cut')
      const finished = reader.events.filter((e) => e.event === 'block.finished').length
      const ran = (await call('GET', `/v1/sessions/${id}`)).body.blocks.length as number
      assert.equal(finished, ran, 'the reader saw every block finish')
    } finally {
      for (const s of stalled) s.socket.destroy()
      await reader.close()
    }
  })
})
