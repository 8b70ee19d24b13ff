// Agent turns over the HTTP API: sync and async turns, cancel, approvals and the journal, the
// events on the session's SSE stream, the OpenAPI document, and refusals with their codes.
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startServer } from '../../src/http/index.js'
import { client, openEvents, waitFor } from '../http/helpers.js'
import { ProviderDouble, pyCall } from './double.js'
import { python } from './harness.js'

test('turns over HTTP: sync, async, cancel, approvals, journal, SSE, OpenAPI, errors', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-agent-http-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-agent-http-root-'))
  process.env.VIS_HOME = home
  writeFileSync(join(root, 'secret.txt'), 'the launch code is 1234\n')
  const double = await new ProviderDouble().start()
  // The agent's configuration from the vis home's agent.json.
  writeFileSync(
    join(home, 'agent.json'),
    JSON.stringify({
      model: 'openai/double-model',
      providers: { openai: { baseURL: double.openaiURL, apiKey: 'sk-http' } },
      prices: { 'openai/double-model': { input: 1, output: 2 } },
      approvals: { rules: [{ tool: 'cat', match: 'secret' }] },
    }),
  )
  const server = await startServer({ home, python, port: 0, pool: { size: 0 }, extensions: false })
  const call = client(server.url)
  try {
    const s = (await call('POST', '/v1/sessions', { roots: [root] })).body
    const sse = await openEvents(`${server.url}/v1/sessions/${s.id}/events`)

    // Sync: the finished turn with the session's usage and cost.
    double.script([{ calls: [pyCall('print(1 + 1)')] }, { text: 'two', usage: { input: 10, output: 1 } }])
    const sync = await call('POST', `/v1/sessions/${s.id}/turns`, { prompt: 'one plus one?' })
    assert.equal(sync.status, 200, sync.text)
    assert.equal(sync.body.status, 'done')
    assert.equal(sync.body.answer, 'two')
    assert.equal(sync.body.iterations.length, 2)
    assert.equal(sync.body.usage.cost_usd, (110 * 1 + 21 * 2) / 1e6)
    assert.deepEqual(sync.body.session_usage, sync.body.usage)
    assert.match(sync.headers.get('location')!, new RegExp(`/v1/sessions/${s.id}/turns/turn_`))

    // Async with an approval: the block waits for a person over HTTP.
    double.script([
      { calls: [pyCall('r = await cat("secret.txt")\nprint(r["content"])')] },
      (req) => ({ text: req.body.messages.at(-1).content }),
    ])
    const accepted = await call(
      'POST',
      `/v1/sessions/${s.id}/turns`,
      { prompt: 'read the secret' },
      { Prefer: 'respond-async' },
    )
    assert.equal(accepted.status, 202, accepted.text)
    assert.ok(['queued', 'running'].includes(accepted.body.status))
    assert.equal(accepted.headers.get('preference-applied'), 'respond-async')
    const turnId = accepted.body.id
    let pending: any[] = []
    await waitFor(
      async () => {
        pending = (await call('GET', `/v1/sessions/${s.id}/approvals?status=pending`)).body.approvals
        return pending.length === 1
      },
      60_000,
      'a pending approval',
    )
    assert.equal(pending[0].tool, 'cat')
    assert.deepEqual(pending[0].args, ['secret.txt'])
    assert.match(pending[0].reason, /matches \/secret\//)
    const bad = await call('POST', `/v1/sessions/${s.id}/approvals/${pending[0].id}`, { decision: 'maybe' })
    assert.equal(bad.status, 400)
    const ok = await call('POST', `/v1/sessions/${s.id}/approvals/${pending[0].id}`, {
      decision: 'approve',
      by: 'carol',
      note: 'fine',
    })
    assert.equal(ok.status, 200, ok.text)
    assert.equal(ok.body.status, 'approved')
    const again = await call('POST', `/v1/sessions/${s.id}/approvals/${pending[0].id}`, { decision: 'deny' })
    assert.equal(again.status, 409)
    assert.equal(again.body.error.code, 'approval.settled')
    await waitFor(
      async () => (await call('GET', `/v1/sessions/${s.id}/turns/${turnId}`)).body.status === 'done',
      60_000,
      'the turn',
    )
    const done = (await call('GET', `/v1/sessions/${s.id}/turns/${turnId}`)).body
    assert.match(done.answer, /the launch code is 1234/)
    const journal = (await call('GET', `/v1/sessions/${s.id}/turns/${turnId}/journal`)).body.calls
    assert.equal(journal.length, 1)
    assert.deepEqual(journal[0].approval, { id: pending[0].id, status: 'approved', decided_by: 'carol' })

    // Cancel a running turn over HTTP.
    double.script([{ calls: [pyCall('import time\nwhile True:\n    time.sleep(0.05)')] }])
    const spin = (
      await call('POST', `/v1/sessions/${s.id}/turns`, { prompt: 'spin' }, { Prefer: 'respond-async' })
    ).body
    await sse.waitFor(
      (evs) => evs.some((e) => e.event === 'block.started' && e.data.data.turn_id === spin.id),
      60_000,
      'the block',
    )
    const cancelled = await call('POST', `/v1/sessions/${s.id}/turns/${spin.id}/cancel`)
    assert.equal(cancelled.status, 200)
    assert.equal(cancelled.body.cancelled, true)
    // The answer is the turn as cancelled, not the view read before the cancel landed.
    assert.equal(cancelled.body.turn.status, 'cancelled')
    await waitFor(
      async () => (await call('GET', `/v1/sessions/${s.id}/turns/${spin.id}`)).body.status === 'cancelled',
      60_000,
      'cancelled',
    )
    assert.equal((await call('POST', `/v1/sessions/${s.id}/turns/${spin.id}/cancel`)).body.cancelled, false)

    // The events on the session's stream.
    await sse.waitFor((evs) => evs.some((e) => e.event === 'turn.cancelled'), 20_000, 'turn.cancelled')
    const kinds = new Set(sse.events.map((e) => e.event))
    for (const k of [
      'turn.started',
      'model.delta',
      'block.started',
      'block.finished',
      'approval.requested',
      'approval.resolved',
      'turn.completed',
      'turn.cancelled',
      'output',
    ]) {
      assert.ok(kinds.has(k), `${k} on the SSE stream`)
    }
    await sse.close()

    const list = (await call('GET', `/v1/sessions/${s.id}/turns`)).body
    assert.deepEqual(
      list.turns.map((t: any) => t.status),
      ['done', 'done', 'cancelled'],
    )
    assert.equal(
      list.usage.input,
      list.turns.reduce((a: number, t: any) => a + t.usage.input, 0),
    )

    // Refusals, each with its code.
    const refusals: [unknown, number, string][] = [
      [{}, 400, 'http.invalid-body'],
      [{ prompt: 'x', model: 'nope/x' }, 400, 'agent.bad-model'],
      [{ prompt: '/missing-template' }, 400, 'agent.unknown-template'],
    ]
    for (const [body, status, code] of refusals) {
      const r = await call('POST', `/v1/sessions/${s.id}/turns`, body)
      assert.equal(r.status, status, JSON.stringify(body))
      assert.equal(r.body.error.code, code)
    }
    assert.equal(
      (await call('GET', `/v1/sessions/${s.id}/turns/turn_nope`)).body.error.code,
      'turn.not-found',
    )
    assert.equal((await call('POST', '/v1/sessions/ses_nope/turns', { prompt: 'x' })).status, 404)

    const doc = (await call('GET', '/v1/openapi.json')).body
    for (const p of [
      '/v1/sessions/{id}/turns',
      '/v1/sessions/{id}/turns/{turnId}',
      '/v1/sessions/{id}/turns/{turnId}/cancel',
      '/v1/sessions/{id}/turns/{turnId}/journal',
      '/v1/sessions/{id}/approvals',
      '/v1/sessions/{id}/approvals/{approvalId}',
    ]) {
      assert.ok(doc.paths[p], `${p} in the OpenAPI document`)
    }
    assert.ok(doc.paths['/v1/sessions/{id}/turns'].post.requestBody)
  } finally {
    await server.close()
    await double.close()
  }
})
