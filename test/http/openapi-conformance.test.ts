// Walks the live OpenAPI document as a client author would, with only the document in hand, and
// checks every real answer against it (openapi-check.ts): for every operation, its success and
// the errors it declares, and the guards every operation shares (no token, a foreign Origin, a
// rebinding Host, an unknown query parameter, an unknown session, a body that is not JSON, too
// large, malformed, of the wrong shape), plus HEAD, OPTIONS and a trailing slash. A status the
// server returns that the document does not list, a Content-Type it does not name or a body that
// does not validate fails here. Every operation of the document must have its success case below,
// so a route added later cannot go unchecked. (openapi-contract.test.ts lints the document and runs
// the generated client; this file is about the answers.)
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { VisServer } from '../../src/http/server.js'
import { rawRequest, tempHome, testServer } from './helpers.js'
import { openApiChecker } from './openapi-check.js'
import { type Got, json, operationCases, type Req } from './openapi-operations.js'

const { home, root } = tempHome('http-conformance')
const TOKEN = 'conformance-token-0123456789abcdef'
const MAX_BODY = 64 * 1024

// Each operation's smallest valid body (a probe for another error must not fail on the body first).
const VALID_BODY: Record<string, unknown> = {
  createSession: {},
  runBlock: { code: '1' },
  interrupt: {},
  createDraft: { label: 'probe' },
  applyDraft: {},
  abandonDraft: {},
  runTurn: { prompt: 'hi' },
  decideApproval: { decision: 'deny' },
}

describe('every answer matches the OpenAPI document', () => {
  let server: VisServer
  let doc: any
  let check: ReturnType<typeof openApiChecker>
  const problems: string[] = []
  // Ids in a session that exists: an open one with a finished block and an attachment.
  const ids: Record<string, string> = {}
  let closedId = ''

  const send = async (r: Req): Promise<Got> => {
    const headers: Record<string, string> = { authorization: `Bearer ${TOKEN}`, ...r.headers }
    for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k]
    if (r.body !== undefined) {
      headers['content-type'] ??= 'application/json'
      // node:http sends a DELETE's body without framing unless told its length.
      headers['content-length'] = String(Buffer.byteLength(r.body))
    }
    const res = await rawRequest(server.url + r.path, { method: r.method, headers, body: r.body })
    const contentType = (res.headers['content-type'] as string | undefined) ?? null
    let parsed: any
    try {
      parsed = JSON.parse(res.text)
    } catch {
      parsed = undefined
    }
    return { status: res.status, contentType, text: res.text, headers: res.headers, json: parsed }
  }

  // Sends, checks the answer against `method docPath` in the document, and checks the status
  // (and error code) this request must get.
  const expect = async (docPath: string, r: Req, status: number, code?: string | RegExp): Promise<Got> => {
    const got = await send(r)
    const label = `${r.method} ${r.path}${r.headers ? ` ${json(r.headers)}` : ''}`
    if (r.method !== 'HEAD' && r.method !== 'OPTIONS') {
      for (const p of check.problems(r.method, docPath, got)) problems.push(`${label}: ${p}`)
    }
    assert.equal(got.status, status, `${label}: ${got.text.slice(0, 400)}`)
    if (code !== undefined) {
      const actual = got.json?.error?.code
      if (typeof code === 'string') assert.equal(actual, code, `${label}: ${got.text.slice(0, 400)}`)
      else assert.match(String(actual), code, `${label}: ${got.text.slice(0, 400)}`)
    }
    return got
  }

  const ops = () =>
    Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, byMethod]) =>
      Object.entries(byMethod).map(([method, op]) => ({
        path,
        method: method.toUpperCase(),
        id: op.operationId as string,
        hasBody: op.requestBody !== undefined,
        bodyRequired: op.requestBody?.required === true,
      })),
    )
  const fill = (docPath: string, sessionId = ids.session!) =>
    docPath
      .replace('{id}', sessionId)
      .replace('{blockId}', ids.block!)
      .replace('{aid}', ids.attachment!)
      .replace('{turnId}', 'trn_nope')
      .replace('{approvalId}', 'apr_nope')

  before(async () => {
    ;({ server } = await testServer({
      home,
      pool: { size: 1 },
      token: TOKEN,
      maxBodyBytes: MAX_BODY,
      interruptAckMs: 2000,
    }))
    const r = await send({ method: 'GET', path: '/v1/openapi.json' })
    assert.equal(r.status, 200)
    doc = r.json
    check = openApiChecker(doc)
    const created = await send({ method: 'POST', path: '/v1/sessions', body: json({ roots: [root] }) })
    ids.session = created.json.id
    const ran = await send({
      method: 'POST',
      path: `/v1/sessions/${ids.session}/blocks`,
      body: json({ code: 'print("hi")\nvis_attach_bytes("hello", "note.txt")' }),
    })
    assert.equal(ran.status, 200, ran.text)
    ids.block = ran.json.id
    ids.attachment = ran.json.attachments[0].id
    const other = await send({ method: 'POST', path: '/v1/sessions', body: '{}' })
    closedId = other.json.id
    await send({ method: 'POST', path: `/v1/sessions/${closedId}/blocks`, body: json({ code: 'print(1)' }) })
    assert.equal((await send({ method: 'DELETE', path: `/v1/sessions/${closedId}` })).status, 200)
  })
  after(async () => {
    await server.close()
  })

  const noProblems = () => {
    const found = problems.splice(0)
    assert.deepEqual(found, [], `answers that differ from the document:\n${found.join('\n')}`)
  }

  test('the guards every operation shares answer as the document says, with their own codes', async () => {
    for (const op of ops()) {
      const path = fill(op.path)
      const body = op.method === 'GET' ? undefined : json(VALID_BODY[op.id] ?? {})
      const base = { method: op.method, path, body }
      if (op.path !== '/v1/health') {
        await expect(op.path, { ...base, headers: { authorization: '' } }, 401, 'http.unauthorized')
        await expect(
          op.path,
          { ...base, headers: { authorization: 'Bearer wrong-token' } },
          401,
          'http.unauthorized',
        )
      }
      await expect(
        op.path,
        { ...base, headers: { origin: 'http://evil.test' } },
        403,
        'http.origin-not-allowed',
      )
      await expect(op.path, { ...base, headers: { host: 'evil.test' } }, 421, 'http.host-not-allowed')
      const bogus = await expect(op.path, { ...base, path: `${path}?bogus=1` }, 400, 'http.invalid-query')
      assert.deepEqual(bogus.json.error.details.parameters, ['bogus'], op.id)
      if (op.path.includes('{id}')) {
        await expect(op.path, { ...base, path: fill(op.path, 'ses_nope') }, 404, /\.not-found$/)
      }
      if (op.method !== 'GET') {
        await expect(
          op.path,
          { ...base, headers: { 'content-type': 'text/plain' }, body: '{}' },
          415,
          'http.unsupported-media-type',
        )
        await expect(op.path, { ...base, body: 'x'.repeat(MAX_BODY + 1) }, 413, 'http.body-too-large')
      }
      if (op.hasBody) {
        await expect(op.path, { ...base, body: '{"code": ' }, 400, 'http.invalid-json')
        await expect(op.path, { ...base, body: '[]' }, 400, 'http.invalid-body')
        // No body at all: refused as invalid exactly when the document says a body is required.
        const bare = await send({ method: op.method, path })
        for (const p of check.problems(op.method, op.path, bare))
          problems.push(`${op.id} without a body: ${p}`)
        if (op.bodyRequired)
          assert.equal(bare.json?.error?.code, 'http.invalid-body', `${op.id}: ${bare.text}`)
        else assert.notEqual(bare.status, 400, `${op.id} declares its body optional: ${bare.text}`)
        const extra = { ...(VALID_BODY[op.id] as object), bogus: 1 }
        const r = await expect(op.path, { ...base, body: json(extra) }, 400, 'http.invalid-body')
        // The message alone (what curl shows, what a log keeps) says what is wrong, and where.
        assert.match(r.json.error.message, /Unrecognized key.*bogus/, op.id)
      }
    }
    noProblems()
  })

  test('HEAD, OPTIONS and a trailing slash answer for every GET as the GET does', async () => {
    const subscribers = server.engine.subscriberCount(ids.session!)
    for (const op of ops().filter((o) => o.method === 'GET')) {
      const path = fill(op.path)
      // The events of an open session never end: only their HEAD is asked for.
      const streams = op.id === 'sessionEvents'
      const get = streams ? undefined : await send({ method: 'GET', path })
      const head = await expect(op.path, { method: 'HEAD', path }, get?.status ?? 200)
      assert.equal(head.text, '', `HEAD ${path} has no body`)
      if (get) {
        assert.equal(baseType(head.contentType), baseType(get.contentType), `HEAD ${path}`)
        const slash = await expect(op.path, { method: 'GET', path: `${path}/` }, get.status)
        assert.equal(slash.contentType, get.contentType, `GET ${path}/`)
      }
      const options = await expect(op.path, { method: 'OPTIONS', path }, 204)
      const allow = String(options.headers.allow).split(', ')
      for (const m of Object.keys(doc.paths[op.path]))
        assert.ok(allow.includes(m.toUpperCase()), `${path}: ${allow}`)
      assert.ok(allow.includes('HEAD') && allow.includes('OPTIONS'), `${path}: ${allow}`)
    }
    // A HEAD of the event stream made no stream: nothing stays subscribed.
    assert.equal(server.engine.subscriberCount(ids.session!), subscribers)
    // A method the path does not have: 405 naming the ones it has.
    const put = await send({ method: 'PUT', path: `/v1/sessions/${ids.session}` })
    assert.equal(put.status, 405)
    assert.equal(put.json.error.code, 'http.method-not-allowed')
    assert.equal(put.headers.allow, 'GET, DELETE, HEAD, OPTIONS')
    noProblems()
  })

  // Each operation's own answers: its success, and the errors only it has.
  const SUCCESS = operationCases({
    expect,
    send,
    fill,
    ids,
    closedId: () => closedId,
    lastEventId: (id) => server.engine.sessionView(id).last_event_id,
  })

  test('every operation has its own cases, and each answers as documented', async () => {
    const documented = ops().map((o) => o.id)
    assert.deepEqual([...documented].sort(), Object.keys(SUCCESS).sort(), 'one case per operation')
    // Drafts in order (create, diff, abandon, apply on the trunk).
    const order = ['createDraft', 'getDraftDiff', 'abandonDraft', 'applyDraft']
    const byId = new Map(ops().map((o) => [o.id, o.path]))
    for (const id of [...documented.filter((d) => !order.includes(d)), ...order]) {
      await SUCCESS[id]!(byId.get(id)!)
    }
    // Everything the walk did to the session (blocks, an error, an attachment, a cancel, an
    // interrupt, a draft made and abandoned, the close) as its event stream: each frame validates.
    await send({ method: 'DELETE', path: `/v1/sessions/${ids.session}` })
    const events = '/v1/sessions/{id}/events'
    const stream = await expect(events, { method: 'GET', path: fill(events) }, 200)
    const types = new Set([...stream.text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]))
    for (const t of ['block.started', 'output', 'block.finished', 'interrupt', 'session.closed']) {
      assert.ok(types.has(t), `${t} in ${[...types]}`)
    }
    noProblems()
  })

  // Last: it closes the engine under the server, as a shutdown does while connections are open.
  test('while the server shuts down, routes answer 503 engine.closed, never a 500', async () => {
    await server.engine.close()
    for (const op of ops()) {
      const body = op.method === 'GET' ? undefined : json(VALID_BODY[op.id] ?? {})
      const got = await send({ method: op.method, path: fill(op.path), body })
      for (const p of check.problems(op.method, op.path, got)) problems.push(`${op.id} at shutdown: ${p}`)
      assert.ok(got.status < 500 || got.json?.error?.code === 'engine.closed', `${op.id}: ${got.text}`)
    }
    for (const [method, path] of [
      ['GET', '/v1/sessions'],
      ['GET', `/v1/sessions/${ids.session}`],
      ['GET', `/v1/sessions/${ids.session}/blocks/${ids.block}`],
      ['POST', `/v1/sessions/${ids.session}/blocks`],
      ['DELETE', `/v1/sessions/${ids.session}`],
    ] as const) {
      const body = method === 'POST' ? json({ code: '1' }) : undefined
      const got = await send({ method, path, body })
      assert.equal(got.status, 503, `${method} ${path}: ${got.text}`)
      assert.equal(got.json.error.code, 'engine.closed')
    }
    noProblems()
  })
})

const baseType = (t: string | null) => (t ?? '').split(';')[0]!.trim()
