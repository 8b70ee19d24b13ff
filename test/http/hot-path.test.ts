// The block hot path's HTTP shortcuts (issue 15 §5) change no behaviour: the size limit still
// holds for every way a body can arrive, and block-started, now committed with the block's
// finish when the block is short, still arrives first, while a long block runs, and on replay.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startServer, type VisServer } from '../../src/http/server.js'
import { client, finishedFor, openEvents, python, rawRequest, tempHome } from './helpers.js'

const { home } = tempHome('http-hot-path')

// A chunked upload (no Content-Length): its size is only known once read.
const chunkedPost = (url: string, body: string) =>
  rawRequest(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    body,
  })

describe('the block hot path over HTTP', () => {
  let server: VisServer
  let call: ReturnType<typeof client>
  before(async () => {
    server = await startServer({ home, python, port: 0, pool: { size: 1 }, maxBodyBytes: 64 * 1024 })
    call = client(server.url)
  })
  after(async () => {
    await server?.close()
  })

  test('the body limit holds for chunked bodies too: small ones run, large ones get 413', async () => {
    const id = (await call('POST', '/v1/sessions', {})).body.id
    const url = `${server.url}/v1/sessions/${id}/blocks`
    const small = await chunkedPost(url, '{"code": "40 + 2"}')
    assert.equal(small.status, 200)
    assert.equal(small.body.result, 42)
    const big = await chunkedPost(url, JSON.stringify({ code: 'x'.repeat(80 * 1024) }))
    assert.equal(big.status, 413)
    assert.equal(big.body.error.code, 'http.body-too-large')
    // With a Content-Length: just under the limit passes the limit (and runs), just over does not.
    const fits = JSON.stringify({ code: `s = '${'a'.repeat(60 * 1024)}'\nlen(s)` })
    const ok = await call('POST', `/v1/sessions/${id}/blocks`, fits)
    assert.equal(ok.status, 200)
    assert.equal(ok.body.result, 60 * 1024)
    const over = await call(
      'POST',
      `/v1/sessions/${id}/blocks`,
      JSON.stringify({ code: 'z'.repeat(65 * 1024) }),
    )
    assert.equal(over.status, 413)
    assert.equal(over.body.error.code, 'http.body-too-large')
  })

  test('block-started arrives while a long block runs, before its finish, and replays in order', async () => {
    const id = (await call('POST', '/v1/sessions', {})).body.id
    const events = await openEvents(`${server.url}/v1/sessions/${id}/events`)
    try {
      const async = await call(
        'POST',
        `/v1/sessions/${id}/blocks`,
        { code: 'import time\nwhile not globals().get("stop"):\n    time.sleep(0.01)' },
        { prefer: 'respond-async' },
      )
      assert.equal(async.status, 202)
      const long = async.body.id
      await events.waitFor(
        (evs) => evs.some((e) => e.event === 'block.started' && e.data.data.block_id === long),
        20_000,
        'block-started of the running block',
      )
      // Still running: the start was not held back until the finish.
      assert.equal(finishedFor(long)(events.events), false)
      assert.equal((await call('GET', `/v1/sessions/${id}/blocks/${long}`)).body.status, 'running')
      await call('POST', `/v1/sessions/${id}/interrupt`, { block_id: long })
      await events.waitFor(finishedFor(long), 20_000, 'the long block to finish')
      // Short blocks: start and finish committed together, still in that order.
      const short = (await call('POST', `/v1/sessions/${id}/blocks`, { code: 'x = 1' })).body.id
      await events.waitFor(finishedFor(short), 20_000, 'the short block to finish')
      const live = events.events
        .filter((e) => e.data?.data?.block_id === short)
        .map((e) => [e.event, e.id] as const)
      assert.deepEqual(
        live.map(([t]) => t),
        ['block.started', 'block.finished'],
      )
      assert.equal(live[1]![1], live[0]![1]! + 1)
      // Replay from the store gives the same sequence as the live stream.
      const replay = await openEvents(`${server.url}/v1/sessions/${id}/events`, { 'last-event-id': '0' })
      try {
        await replay.waitFor(finishedFor(short), 20_000, 'the replay')
        const ids = (xs: typeof events.events) => xs.map((e) => `${e.id}:${e.event}`)
        assert.deepEqual(ids(replay.events).slice(0, events.events.length), ids(events.events))
      } finally {
        await replay.close()
      }
    } finally {
      await events.close()
    }
  })
})
