// Issue 30 §6: what the event stream says about positions and replay points. A Last-Event-ID past
// the session's last event used to answer 200 and then drop every later event (each id was "not
// after" the bogus one); every block-started carried position 0 (a deferred row's position is
// allocated only when it is stored), stored so, and replayed so.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { VisServer } from '../../src/http/server.js'
import { type client, finishedFor, openEvents, type SseEvent, tempHome, testServer } from './helpers.js'

const { home, root } = tempHome('http-event-ids')

describe('event ids and block positions on the stream', () => {
  let server: VisServer
  let call: ReturnType<typeof client>
  before(async () => {
    ;({ server, call } = await testServer({ home, pool: { size: 1 } }))
  })
  after(async () => {
    await server.close()
  })

  const newSession = async () => {
    const r = await call('POST', '/v1/sessions', { roots: [root] })
    assert.equal(r.status, 201, r.text)
    return r.body.id as string
  }

  test('a Last-Event-ID beyond the last event of an open session is refused with 400', async () => {
    const id = await newSession()
    const b = await call('POST', `/v1/sessions/${id}/blocks`, { code: 'print(1)', timeout_ms: 20_000 })
    assert.equal(b.status, 200, b.text)
    const last = (await call('GET', `/v1/sessions/${id}`)).body.last_event_id as number

    // Read as a stream: before the fix this was a 200 stream that never ends.
    const events = `${server.url}/v1/sessions/${id}/events`
    const refusal = async (headers: Record<string, string>, query = '') => {
      const res = await openEvents(events + query, headers)
      const text = res.status === 200 ? '(an event stream)' : JSON.stringify(res.events)
      await res.close()
      assert.equal(res.status, 400, text)
      return (await call('GET', `/v1/sessions/${id}/events${query}`, undefined, headers)).body
    }
    const beyond = { body: await refusal({ 'last-event-id': String(last + 1000) }) }
    assert.equal(beyond.body.error.code, 'http.invalid-header')
    assert.match(beyond.body.error.message, new RegExp(`beyond.*last event.*${last}`))
    assert.deepEqual(beyond.body.error.details, {
      header: 'Last-Event-ID',
      lastEventId: last + 1000,
      sessionId: id,
      last_event_id: last,
    })
    const query = await refusal({}, `?after=${last + 1}`)
    assert.equal(query.error.code, 'http.invalid-query')
    assert.deepEqual(query.error.details.parameters, ['after'])

    // The last event itself is a fine replay point: what comes next arrives.
    const sse = await openEvents(events, { 'Last-Event-ID': String(last) })
    assert.equal(sse.status, 200)
    const next = await call('POST', `/v1/sessions/${id}/blocks`, { code: 'print(2)', timeout_ms: 20_000 })
    await sse.waitFor(finishedFor(next.body.id), 20_000, 'the next block-finished')
    assert.ok(sse.events.every((e) => (e.id ?? 0) > last))
    await sse.close()
  })

  test("every block-started carries its block's real position, live and replayed", async () => {
    const id = await newSession()
    const sse = await openEvents(`${server.url}/v1/sessions/${id}/events`)
    const blocks: { id: string; position: number }[] = []
    // The ways a block's row reaches the store: with its finish (a short sync block), by the
    // event log's flush timer while it still runs (a long one), at acceptance (202), with an
    // Idempotency-Key (stored at once), and queued behind another block.
    const sync = (code: string, headers: Record<string, string> = {}) =>
      call('POST', `/v1/sessions/${id}/blocks`, { code, timeout_ms: 20_000 }, headers)
    for (const r of [
      await sync('1 + 1'),
      await sync('import time\ntime.sleep(0.3)\nprint("slow")'),
      await sync('2 + 2', { 'idempotency-key': 'k-1' }),
    ]) {
      assert.equal(r.status, 200, r.text)
      blocks.push({ id: r.body.id, position: r.body.position })
    }
    const queued = await Promise.all([
      sync('import time\ntime.sleep(0.2)', { prefer: 'respond-async' }),
      sync('3 + 3', { prefer: 'respond-async' }),
      sync('4 + 4'),
    ])
    for (const r of queued) {
      assert.ok(r.status === 200 || r.status === 202, r.text)
      blocks.push({ id: r.body.id, position: r.body.position })
    }
    for (const b of blocks) await sse.waitFor(finishedFor(b.id), 20_000, `block ${b.id} finished`)
    await sse.close()
    const stored = (await call('GET', `/v1/sessions/${id}`)).body.blocks as { id: string; position: number }[]
    const positions = new Map(stored.map((b) => [b.id, b.position]))
    assert.deepEqual(
      [...positions.values()].sort((a, b) => a - b),
      blocks.map((_, i) => i + 1),
    )

    const startedPositions = (evs: SseEvent[]) =>
      evs
        .filter((e) => e.event === 'block.started')
        .map((e) => [e.data.data.block_id as string, e.data.data.position as number])
    const expected = [...positions.entries()].sort((a, b) => a[1] - b[1])
    assert.deepEqual(startedPositions(sse.events), expected, 'live')

    // Replayed from the store by a new stream, and by the session's transcript of events.
    const replay = await openEvents(`${server.url}/v1/sessions/${id}/events`)
    const lastBlock = expected.at(-1)![0]
    await replay.waitFor(finishedFor(lastBlock), 20_000, 'the replay')
    await replay.close()
    assert.deepEqual(startedPositions(replay.events), expected, 'replayed')
  })
})
