// Event names are dotted everywhere (src/util/event-names.ts); the kebab names of 0.1 still reach
// the clients that listen for them, as id-less copies that follow the dotted frame, and logs
// written with them read back dotted.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, describe, test } from 'node:test'
import { EventSource } from 'eventsource'
import type { VisServer } from '../../src/http/server.js'
import { EVENT_NAMES, KEBAB_ALIASES } from '../../src/util/event-names.js'
import { type client, finishedFor, openEvents, tempHome, testServer, waitFor } from './helpers.js'

const { home, root } = tempHome('http-event-names')

describe('event names', () => {
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

  test('the stream sends dotted names, each renamed one followed by its kebab alias without an id', async () => {
    const id = await newSession()
    const sub = await call('POST', `/v1/sessions/${id}/blocks`, { code: 'print("hi")' })
    const sse = await openEvents(`${server.url}/v1/sessions/${id}/events`)
    await waitFor(() => finishedFor(sub.body.id)(sse.events), 20_000, 'block.finished')
    assert.equal((await call('DELETE', `/v1/sessions/${id}`)).status, 200)
    await waitFor(() => sse.ended, 20_000, 'the stream to end')
    const types = sse.events.map((e) => e.event)
    assert.deepEqual(types, ['block.started', 'output', 'block.finished', 'session.closed'])
    for (const e of sse.events) assert.equal((e.data as { type: string }).type, e.event)
    // One alias per renamed event, in order, carrying the same data; `output` has no old name.
    assert.deepEqual(
      sse.aliases.map((a) => a.event),
      ['block-started', 'block-finished', 'session-closed'],
    )
    for (const a of sse.aliases) {
      assert.equal(a.id, undefined)
      const main = sse.events.find((e) => e.id === (a.data as { id: number }).id)
      assert.ok(main, `the event ${a.event} copies`)
      assert.equal(KEBAB_ALIASES[main.event as keyof typeof KEBAB_ALIASES], a.event)
      assert.deepEqual(a.data, main.data)
    }
  })

  test('an EventSource listening for the old names still gets them, and its replay point is the real id', async () => {
    const id = await newSession()
    await call('POST', `/v1/sessions/${id}/blocks`, { code: 'print("old")' })
    const requests: (string | null)[] = []
    const seen: string[] = []
    const es = new EventSource(`${server.url}/v1/sessions/${id}/events`, {
      fetch: (url, init) => {
        requests.push(new Headers(init?.headers).get('last-event-id'))
        return fetch(url, init)
      },
    })
    for (const t of ['block-started', 'block-finished', 'session-closed'])
      es.addEventListener(t, () => seen.push(t))
    await waitFor(() => seen.includes('block-finished'), 20_000, 'the old block-finished')
    assert.equal((await call('DELETE', `/v1/sessions/${id}`)).status, 200)
    await waitFor(() => es.readyState === EventSource.CLOSED, 20_000, 'the EventSource to give up')
    assert.deepEqual(seen, ['block-started', 'block-finished', 'session-closed'])
    // The reconnect after session.closed names the last stored event, not a copy's.
    assert.deepEqual(requests, [null, String(server.engine.sessionView(id).last_event_id)])
  })

  test('a log written with the kebab names reads back dotted', async () => {
    const id = await newSession()
    const old = server.engine.store.events.append(id, {
      type: 'worker-retired',
      data: { pid: 1, reason: 'old' },
    })
    const sse = await openEvents(`${server.url}/v1/sessions/${id}/events?after=${old.seq - 1}`)
    await waitFor(() => sse.events.length > 0, 20_000, 'the replayed event')
    assert.equal(sse.events[0]?.event, 'worker.retired')
    assert.equal((sse.events[0]!.data as { type: string }).type, 'worker.retired')
    assert.deepEqual(
      sse.aliases.map((a) => a.event),
      ['worker-retired'],
    )
    await sse.close()
    await call('DELETE', `/v1/sessions/${id}`)
  })

  test('the page listens only for catalogued names', () => {
    // The page reads the stream itself (web/authed.js eventStream) and hands on the event types
    // in its one FOLLOWED set: each must be a catalogued name.
    const page = readFileSync(new URL('../../web/app.js', import.meta.url), 'utf8')
    assert.equal([...page.matchAll(/const FOLLOWED = new Set\(\[/g)].length, 1)
    assert.match(page, /FOLLOWED\.has\(type\)/)
    const list = page.slice(
      page.indexOf('const FOLLOWED = new Set(['),
      page.indexOf('])', page.indexOf('const FOLLOWED')),
    )
    const names = [...list.matchAll(/'([^']+)'/g)].map((m) => m[1])
    assert.ok(names.length >= 5, list)
    for (const n of names)
      assert.ok((EVENT_NAMES as readonly string[]).includes(n!), `${n} is not catalogued`)
  })
})
