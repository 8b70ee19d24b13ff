// A client that hangs up on a synchronous request stops the work it waited for, as Ctrl-C
// would: a turn ends cancelled (model request aborted, running block interrupted), a block is
// interrupted or cancelled. The worker stays usable. A block sent with an Idempotency-Key runs
// to its end (the client said it will retry), and an async turn runs on.
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { type ClientRequest, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { agentFor } from '../../src/agent/index.js'
import type { VisServer } from '../../src/http/server.js'
import { ProviderDouble, pyCall } from '../agent/double.js'
import { type client, testServer, waitFor } from './helpers.js'

const home = mkdtempSync(join(tmpdir(), 'vis-hangup-home-'))
const root = mkdtempSync(join(tmpdir(), 'vis-hangup-root-'))
process.env.VIS_HOME = home

const SLOW = 'import time\nprint("started", flush=True)\nwhile True:\n    time.sleep(0.02)'

// A real HTTP client that sends a request and can hang up before the answer.
function send(base: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const u = new URL(path, base)
  const text = JSON.stringify(body)
  let answered = false
  const req: ClientRequest = request({
    host: u.hostname,
    port: u.port,
    path: u.pathname,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers },
  })
  req.on('response', () => {
    answered = true
  })
  req.on('error', () => undefined) // the hang-up itself
  req.end(text)
  return { hangUp: () => req.destroy(), answered: () => answered }
}

// The block that printed "started" (its Python runs), from the session's own events.
function startedBlock(server: VisServer, id: string): () => string | undefined {
  let started: string | undefined
  server.engine.subscribe(id, (ev) => {
    const d = ev.data as { block_id?: string; data?: string }
    if (ev.type === 'output' && d.data?.includes('started')) started = d.block_id
  })
  return () => started
}

describe('clients that hang up', () => {
  let server: VisServer
  let call: ReturnType<typeof client>
  let double: ProviderDouble
  before(async () => {
    double = await new ProviderDouble().start()
    writeFileSync(
      join(home, 'agent.json'),
      JSON.stringify({
        model: 'openai/double-model',
        providers: { openai: { baseURL: double.openaiURL, apiKey: 'sk-hangup' } },
      }),
    )
    ;({ server, call } = await testServer({ home, pool: { size: 0 }, extensions: false }))
  })
  after(async () => {
    await server.close()
    await double.close()
  })

  const newSession = async () => {
    const r = await call('POST', '/v1/sessions', { roots: [root] })
    assert.equal(r.status, 201, r.text)
    return r.body.id as string
  }
  const turnsOf = async (id: string) => (await call('GET', `/v1/sessions/${id}/turns`)).body.turns as any[]

  test('a sync turn whose client hangs up mid-block ends cancelled, its block interrupted; the worker stays usable', async () => {
    const id = await newSession()
    assert.equal((await call('POST', `/v1/sessions/${id}/blocks`, { code: 'kept = 41' })).status, 200)
    const asked = double.requests.length
    // Were the turn to go on, the model would be asked again: it would answer.
    double.script([{ calls: [pyCall(SLOW)] }], { text: 'the turn went on' })
    const started = startedBlock(server, id)
    const client = send(server.url, `/v1/sessions/${id}/turns`, { prompt: 'loop for ever' })
    await waitFor(() => started() !== undefined, 60_000, 'the turn to run its block')
    const blockId = started()!
    client.hangUp()
    await waitFor(async () => (await turnsOf(id))[0]?.status === 'cancelled', 60_000, 'the turn to end')
    const [turn] = await turnsOf(id)
    assert.equal(turn.error.code, 'turn.cancelled')
    assert.match(turn.error.message, /HTTP client waiting for it disconnected/)
    assert.equal(client.answered(), false)
    const block = (await call('GET', `/v1/sessions/${id}/blocks/${blockId}`)).body
    assert.equal(block.status, 'done')
    assert.equal(block.error.phase, 'interrupted')
    assert.equal(double.requests.length, asked + 1, 'the model was not asked again')

    // The same worker: its globals are intact, and the next turn runs to its answer.
    const next = await call('POST', `/v1/sessions/${id}/blocks`, { code: 'print(kept + 1)' })
    assert.equal(next.body.stdout, '42\n')
    assert.equal(next.body.error, null)
    double.script([{ calls: [pyCall('print(kept)')] }, { text: 'kept is 41' }])
    const again = await call('POST', `/v1/sessions/${id}/turns`, { prompt: 'what is kept?' })
    assert.equal(again.status, 200, again.text)
    assert.equal(again.body.status, 'done')
    assert.equal(again.body.answer, 'kept is 41')
  })

  test('a sync turn whose client hangs up while the model is answering aborts that request', async () => {
    const id = await newSession()
    double.script([{ fault: { kind: 'stall-before-first-byte' } }], { text: 'the turn went on' })
    const asked = double.requests.length
    const client = send(server.url, `/v1/sessions/${id}/turns`, { prompt: 'think hard' })
    await waitFor(() => double.requests.length === asked + 1, 60_000, 'the model request')
    client.hangUp()
    await waitFor(async () => (await turnsOf(id))[0]?.status === 'cancelled', 60_000, 'the turn to end')
    assert.equal(double.requests.length, asked + 1, 'no retry of the aborted request')
  })

  test('a sync turn whose client hangs up while it is queued ends cancelled when its time comes', async () => {
    const id = await newSession()
    // Should the queued turn reach the model before the server has seen the hang-up, that request
    // stalls until the hang-up aborts it: either way the turn answers nothing.
    double.script([{ calls: [pyCall(SLOW)] }], { fault: { kind: 'stall-before-first-byte' } })
    const started = startedBlock(server, id)
    const first = await call(
      'POST',
      `/v1/sessions/${id}/turns`,
      { prompt: 'loop' },
      { Prefer: 'respond-async' },
    )
    await waitFor(() => started() !== undefined, 60_000, 'the first turn to run its block')
    // The turn's id, which a sync request only learns from its answer: from the agent itself.
    const agent = agentFor(server.engine)
    const startTurn = agent.startTurn.bind(agent)
    let queuedId: string | undefined
    agent.startTurn = async (...args) => {
      const st = await startTurn(...args)
      queuedId = st.turnId
      return st
    }
    const queued = send(server.url, `/v1/sessions/${id}/turns`, { prompt: 'after that' })
    try {
      await waitFor(() => queuedId !== undefined, 60_000, 'the second turn to be accepted')
    } finally {
      agent.startTurn = startTurn
    }
    const waiting = await call('GET', `/v1/sessions/${id}/turns/${queuedId}`)
    assert.equal(waiting.body.status, 'queued')
    queued.hangUp()
    const cancel = await call('POST', `/v1/sessions/${id}/turns/${first.body.id}/cancel`)
    assert.equal(cancel.body.cancelled, true)
    await waitFor(
      async () => {
        const ts = await turnsOf(id)
        return ts.length === 2 && ts.every((t) => t.status === 'cancelled')
      },
      60_000,
      'both turns to end',
    )
    const second = (await call('GET', `/v1/sessions/${id}/turns/${queuedId}`)).body
    assert.equal(second.status, 'cancelled')
    assert.match(second.error.message, /HTTP client waiting for it disconnected/)
    assert.deepEqual(second.iterations, [])
    assert.equal(second.answer, null)
  })

  test('an async turn runs on after its client has gone', async () => {
    const id = await newSession()
    double.script([{ calls: [pyCall('print(6 * 7)')] }, { text: 'forty-two' }])
    const r = await call(
      'POST',
      `/v1/sessions/${id}/turns`,
      { prompt: 'six sevens?' },
      { Prefer: 'respond-async' },
    )
    assert.equal(r.status, 202)
    await waitFor(async () => (await turnsOf(id))[0]?.status === 'done', 60_000, 'the turn to finish')
    assert.equal((await turnsOf(id))[0].answer, 'forty-two')
  })

  // Through the fast routes (the default) and through hono (fastRoutes: false): both stop the block.
  for (const fastRoutes of [true, false]) {
    test(`a sync block whose client hangs up is interrupted; with an Idempotency-Key it runs to its end for the retry (${fastRoutes ? 'fast routes' : 'hono'})`, async () => {
      const own = fastRoutes
        ? undefined
        : await testServer({
            home: mkdtempSync(join(tmpdir(), 'vis-hangup-hono-')),
            pool: { size: 0 },
            extensions: false,
            fastRoutes,
          })
      const srv = own?.server ?? server
      const req = own?.call ?? call
      try {
        await blockHangup(srv, req)
      } finally {
        await own?.server.close()
      }
      if (fastRoutes) assert.ok(srv.fastRoutes!.served >= 6, `fast routes served ${srv.fastRoutes!.served}`)
      else assert.equal(srv.fastRoutes, undefined)
    })
  }
})

async function blockHangup(server: VisServer, call: ReturnType<typeof client>) {
  const id = await newSessionOn(call)
  assert.equal((await call('POST', `/v1/sessions/${id}/blocks`, { code: 'kept = 7' })).status, 200)
  const started = startedBlock(server, id)
  const client = send(server.url, `/v1/sessions/${id}/blocks`, { code: SLOW })
  await waitFor(() => started() !== undefined, 60_000, 'the block to start')
  const blockId = started()!
  client.hangUp()
  await waitFor(
    async () => (await call('GET', `/v1/sessions/${id}/blocks/${blockId}`)).body.status === 'done',
    60_000,
    'the block to stop',
  )
  const stopped = (await call('GET', `/v1/sessions/${id}/blocks/${blockId}`)).body
  assert.equal(stopped.error.phase, 'interrupted')
  const next = await call('POST', `/v1/sessions/${id}/blocks`, { code: 'print(kept * 6)' })
  assert.equal(next.body.stdout, '42\n')

  // With a key: the hang-up leaves the block running; the retry waits for the same block.
  const code =
    'import time\nprint("started", flush=True)\nfor _ in range(40):\n    time.sleep(0.05)\nprint("finished")'
  const keyed = send(server.url, `/v1/sessions/${id}/blocks`, { code }, { 'Idempotency-Key': 'hang-1' })
  await waitFor(() => server.engine.runningBlock(id) !== undefined, 60_000, 'the keyed block to run')
  const keyedId = server.engine.runningBlock(id)
  keyed.hangUp()
  const retry = await call('POST', `/v1/sessions/${id}/blocks`, { code }, { 'Idempotency-Key': 'hang-1' })
  assert.equal(retry.status, 200, retry.text)
  assert.equal(retry.headers.get('idempotent-replayed'), 'true')
  assert.equal(retry.body.id, keyedId)
  assert.equal(retry.body.stdout, 'started\nfinished\n')
  assert.equal(retry.body.error, null)
}

async function newSessionOn(call: ReturnType<typeof client>) {
  const r = await call('POST', '/v1/sessions', { roots: [root] })
  assert.equal(r.status, 201, r.text)
  return r.body.id as string
}
