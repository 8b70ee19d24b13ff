// Each operation of the OpenAPI document, as a client author exercises it: its success, and the
// errors only it has. openapi-conformance.test.ts runs these through its checker (every answer
// validated against the live document) and requires one entry per operationId in the document.
import assert from 'node:assert/strict'
import { waitFor } from './helpers.js'
import type { Answer } from './openapi-check.js'

export type Req = { method: string; path: string; headers?: Record<string, string>; body?: string }
export type Got = Answer & { headers: import('node:http').IncomingHttpHeaders; json: any }

// What the cases need from the walk: its request functions and the ids it set up.
export type Walk = {
  // Sends, checks the answer against `method docPath` in the document and its status (and code).
  expect(docPath: string, r: Req, status: number, code?: string | RegExp): Promise<Got>
  send(r: Req): Promise<Got>
  // The document's path with the walk's ids (or another session's) filled in.
  fill(docPath: string, sessionId?: string): string
  // In the open session: session, block (done), attachment.
  ids: Record<string, string>
  closedId(): string
  lastEventId(sessionId: string): number
}

export const json = (v: unknown) => JSON.stringify(v)

export function operationCases(w: Walk): Record<string, (p: string) => Promise<void>> {
  const { expect, send, fill } = w
  return {
    createSession: async (p) => {
      const r = await expect(p, { method: 'POST', path: p, body: json({ title: 'walk' }) }, 201)
      assert.equal(r.headers.location, `/v1/sessions/${r.json.id}`)
      await expect(p, { method: 'POST', path: p }, 201)
      await expect(p, { method: 'POST', path: p, body: json({ id: r.json.id }) }, 409, 'session.exists')
      await expect(p, { method: 'POST', path: p, body: json({ roots: ['/'] }) }, 400, 'policy.root-too-broad')
      await expect(p, { method: 'POST', path: p, body: json({ id: '..' }) }, 400, 'http.invalid-body')
    },
    listSessions: async (p) => {
      await expect(p, { method: 'GET', path: p }, 200)
      await expect(p, { method: 'GET', path: `${p}?state=closed&limit=5&offset=0` }, 200)
      await expect(p, { method: 'GET', path: `${p}?limit=0` }, 400, 'http.invalid-query')
      const twice = await expect(
        p,
        { method: 'GET', path: `${p}?limit=1&limit=2` },
        400,
        'http.invalid-query',
      )
      assert.deepEqual(twice.json.error.details.parameters, ['limit'])
      assert.match(twice.json.error.message, /limit: given 2 times/)
    },
    getSession: async (p) => {
      await expect(p, { method: 'GET', path: fill(p) }, 200)
      await expect(p, { method: 'GET', path: `${fill(p)}?format=display` }, 200)
      await expect(p, { method: 'GET', path: `${fill(p)}?format=pretty` }, 400, 'http.invalid-query')
    },
    closeSession: async (p) => {
      const s = await send({ method: 'POST', path: '/v1/sessions', body: '{}' })
      await expect(p, { method: 'DELETE', path: fill(p, s.json.id) }, 200)
      await expect(p, { method: 'DELETE', path: fill(p, s.json.id) }, 200)
    },
    runBlock: async (p) => {
      const path = fill(p)
      const r = await expect(p, { method: 'POST', path, body: json({ code: '6 * 7' }) }, 200)
      assert.equal(r.json.result, 42)
      const slow = { code: 'import time\ntime.sleep(0.3)', timeout_ms: 30_000 }
      const a = await expect(
        p,
        { method: 'POST', path, headers: { prefer: 'respond-async' }, body: json(slow) },
        202,
      )
      assert.equal(a.headers.location, `${path}/${a.json.id}`)
      const key = { 'idempotency-key': 'walk-1' }
      const first = await expect(
        p,
        { method: 'POST', path, headers: key, body: json({ code: 'k = 1' }) },
        200,
      )
      const again = await expect(
        p,
        { method: 'POST', path, headers: key, body: json({ code: 'k = 1' }) },
        200,
      )
      assert.equal(again.json.id, first.json.id)
      await expect(
        p,
        { method: 'POST', path, headers: key, body: json({ code: 'k = 2' }) },
        422,
        'idempotency.key-reused',
      )
      await expect(
        p,
        { method: 'POST', path, headers: { 'idempotency-key': 'k'.repeat(300) }, body: json({ code: '1' }) },
        400,
        'http.invalid-header',
      )
      const wrong = await expect(
        p,
        { method: 'POST', path, body: json({ code: 1 }) },
        400,
        'http.invalid-body',
      )
      assert.match(wrong.json.error.message, /code: Expected string, received number/)
      await expect(p, { method: 'POST', path, body: '' }, 400, 'http.invalid-body')
      await expect(
        p,
        { method: 'POST', path: fill(p, w.closedId()), body: json({ code: '1' }) },
        409,
        'session.closed',
      )
      // An error in the code is the block's outcome, not the request's.
      const boom = await expect(p, { method: 'POST', path, body: json({ code: '1/0' }) }, 200)
      assert.match(boom.json.error.message, /ZeroDivisionError/)
    },
    getBlock: async (p) => {
      await expect(p, { method: 'GET', path: fill(p) }, 200)
      await expect(p, { method: 'GET', path: `${fill(p)}?format=display` }, 200)
      await expect(
        p,
        { method: 'GET', path: fill(p).replace(w.ids.block!, 'blk_nope') },
        404,
        'block.not-found',
      )
    },
    cancelBlock: async (p) => {
      const blocks = `/v1/sessions/${w.ids.session}/blocks`
      const async = { prefer: 'respond-async' }
      const running = await send({
        method: 'POST',
        path: blocks,
        headers: async,
        body: json({ code: 'import time\nwhile True:\n    time.sleep(0.01)' }),
      })
      const queued = await send({ method: 'POST', path: blocks, headers: async, body: json({ code: '2' }) })
      assert.equal(queued.json.status, 'queued')
      const cancel = (blockId: string) => p.replace('{id}', w.ids.session!).replace('{blockId}', blockId)
      const r = await expect(p, { method: 'POST', path: cancel(queued.json.id) }, 200)
      assert.equal(r.json.error.code, 'block.cancelled')
      await expect(p, { method: 'POST', path: cancel(queued.json.id) }, 409, 'block.not-queued')
      await expect(p, { method: 'POST', path: cancel('blk_nope') }, 404, 'block.not-found')
      await waitFor(
        async () =>
          (await send({ method: 'GET', path: `${blocks}/${running.json.id}` })).json.status === 'running',
        30_000,
        'the loop to run',
      )
      await expect(p, { method: 'POST', path: cancel(running.json.id) }, 409, 'block.not-queued')
      const stop = await expect(
        '/v1/sessions/{id}/interrupt',
        {
          method: 'POST',
          path: `/v1/sessions/${w.ids.session}/interrupt`,
          body: json({ block_id: running.json.id }),
        },
        200,
      )
      assert.equal(stop.json.landed, true)
    },
    sessionEvents: async (p) => {
      const path = fill(p, w.closedId())
      const all = await expect(p, { method: 'GET', path }, 200)
      const last = w.lastEventId(w.closedId())
      assert.match(all.text, new RegExp(`id: ${last}\nevent: session.closed\n`))
      await expect(p, { method: 'GET', path, headers: { 'last-event-id': String(last) } }, 204)
      await expect(p, { method: 'GET', path: `${path}?after=1` }, 200)
      await expect(p, { method: 'GET', path, headers: { 'last-event-id': 'x' } }, 400, 'http.invalid-header')
      await expect(p, { method: 'GET', path: `${path}?after=-1` }, 400, 'http.invalid-query')
      // Beyond the last event of an open session: no event has that id (issue 30).
      const open = fill(p)
      const beyond = String(w.lastEventId(w.ids.session!) + 100)
      await expect(
        p,
        { method: 'GET', path: open, headers: { 'last-event-id': beyond } },
        400,
        'http.invalid-header',
      )
      await expect(p, { method: 'GET', path: `${open}?after=${beyond}` }, 400, 'http.invalid-query')
    },
    interrupt: async (p) => {
      const r = await expect(p, { method: 'POST', path: fill(p) }, 200)
      assert.equal(r.json.landed, false)
      await expect(
        p,
        { method: 'POST', path: fill(p), body: json({ block_id: 'blk_nope' }) },
        404,
        'block.not-found',
      )
    },
    getAttachment: async (p) => {
      const r = await expect(p, { method: 'GET', path: fill(p) }, 200)
      assert.equal(r.text, 'hello')
      // Text from the sandbox: a download, sandboxed (issue 30; attachment-sandbox.test.ts has the rest).
      assert.equal(r.headers['content-disposition'], "attachment; filename*=UTF-8''note.txt")
      assert.equal(r.headers['content-security-policy'], 'sandbox')
      await expect(
        p,
        { method: 'GET', path: fill(p).replace(w.ids.attachment!, 'att_nope') },
        404,
        'attachment.not-found',
      )
    },
    health: async (p) => {
      await expect(p, { method: 'GET', path: p }, 200)
      const open = await expect(p, { method: 'GET', path: p, headers: { authorization: '' } }, 200)
      assert.equal(open.json.home, undefined)
    },
    doctor: async (p) => void (await expect(p, { method: 'GET', path: p }, 200)),
    listExtensions: async (p) => void (await expect(p, { method: 'GET', path: p }, 200)),
    reloadExtensions: async (p) => void (await expect(p, { method: 'POST', path: p }, 200)),
    metrics: async (p) => void (await expect(p, { method: 'GET', path: p }, 200)),
    openapi: async (p) => void (await expect(p, { method: 'GET', path: p }, 200)),
    getDraft: async (p) => void (await expect(p, { method: 'GET', path: fill(p) }, 200)),
    createDraft: async (p) => {
      await expect(p, { method: 'POST', path: fill(p), body: json({ label: 'walk' }) }, 201)
      await expect(p, { method: 'POST', path: fill(p), body: json({ label: 'again' }) }, 409)
    },
    getDraftDiff: async (p) => void (await expect(p, { method: 'GET', path: fill(p) }, 200)),
    abandonDraft: async (p) => {
      await expect(p, { method: 'POST', path: fill(p), body: json({ why: 'walked' }) }, 200)
      await expect(p, { method: 'POST', path: fill(p), body: '{}' }, 409)
    },
    applyDraft: async (p) => {
      const r = await expect(p, { method: 'POST', path: fill(p), body: '{}' }, 200)
      assert.equal(r.json.status, 'noop')
      await expect(
        p,
        { method: 'POST', path: fill(p), body: json({ theirs: true, ours: true }) },
        400,
        'http.invalid-body',
      )
    },
    runTurn: async (p) => {
      // No model is configured here: the request is the client's to fix.
      await expect(p, { method: 'POST', path: fill(p), body: json({ prompt: 'hi' }) }, 400, /^agent\./)
    },
    listTurns: async (p) => void (await expect(p, { method: 'GET', path: fill(p) }, 200)),
    getTurn: async (p) => void (await expect(p, { method: 'GET', path: fill(p) }, 404, 'turn.not-found')),
    cancelTurn: async (p) => void (await expect(p, { method: 'POST', path: fill(p) }, 404, 'turn.not-found')),
    turnJournal: async (p) => void (await expect(p, { method: 'GET', path: fill(p) }, 404, 'turn.not-found')),
    getAgent: async (p) => {
      const r = await expect(p, { method: 'GET', path: p }, 200)
      assert.ok(typeof r.json.model === 'string' || r.json.problem !== null, r.text)
    },
    listApprovals: async (p) => {
      await expect(p, { method: 'GET', path: `${fill(p)}?status=pending` }, 200)
      await expect(p, { method: 'GET', path: `${fill(p)}?status=maybe` }, 400, 'http.invalid-query')
    },
    decideApproval: async (p) => {
      await expect(
        p,
        { method: 'POST', path: fill(p), body: json({ decision: 'deny' }) },
        404,
        /\.not-found$/,
      )
      await expect(
        p,
        { method: 'POST', path: fill(p), body: json({ decision: 'maybe' }) },
        400,
        'http.invalid-body',
      )
    },
  }
}
