// What keeps other web pages and other names from driving the server, request by request
// (the same attacks from a real browser are in browser.test.ts): Host, Origin and CORS, JSON
// bodies, the token by header and query (never a cookie), and `vis serve`'s own token.
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { after, before, describe, test } from 'node:test'
import { createAdaptorServer } from '@hono/node-server'
import { createApp } from '../../src/http/app.js'
import { startServer, type VisServer } from '../../src/http/server.js'
import { client, python, rawRequest, spawnServe, tempHome, waitFor } from './helpers.js'

const { home, root } = tempHome('http-guards')
const TOKEN = 'guards-test-token-0123456789abcdef'
const OWN_PAGE = 'http://ui.example:5173'

describe('browser guards', () => {
  let open: VisServer
  let locked: VisServer
  let lockedHome: string
  before(async () => {
    // As a library user starts it: loopback, no token. Only the guards stand between pages and it.
    open = await startServer({ home, python, port: 0, pool: { size: 0 } })
    lockedHome = tempHome('http-guards-locked').home
    locked = await startServer({
      home: lockedHome,
      python,
      port: 0,
      pool: { size: 0 },
      token: TOKEN,
      allowedHosts: ['vis.internal'],
      corsOrigins: [OWN_PAGE],
    })
  })
  after(async () => {
    await open?.close()
    await locked?.close()
  })

  const sessions = (s: VisServer) => s.engine.listSessions({ state: 'all' }).length

  test('a Host that is not a loopback name or a configured one is 421, before anything runs', async () => {
    const before = sessions(open)
    const body = JSON.stringify({ roots: [root] })
    const json = { 'content-type': 'application/json' }
    for (const host of ['evil.test', `evil.test:${open.port}`, 'localhost.evil.test', '127.0.0.1.nip.io']) {
      const r = await rawRequest(`${open.url}/v1/sessions`, {
        method: 'POST',
        headers: { ...json, host },
        body,
      })
      assert.equal(r.status, 421, `Host ${host}`)
      assert.equal(r.body.error.code, 'http.host-not-allowed')
      assert.match(r.body.error.message, /--allow-host/)
    }
    // Reading is refused too: a rebound page learns nothing.
    const read = await rawRequest(`${open.url}/v1/sessions`, { headers: { host: 'evil.test' } })
    assert.equal(read.status, 421)
    assert.equal(sessions(open), before, 'no session was created')
    for (const host of [
      `127.0.0.1:${open.port}`,
      `localhost:${open.port}`,
      'LOCALHOST',
      `[::1]:${open.port}`,
      'app.localhost',
    ]) {
      const r = await rawRequest(`${open.url}/v1/sessions`, { headers: { host } })
      assert.equal(r.status, 200, `Host ${host}`)
    }
    // A configured name is served; on the locked server only with the token, as any request.
    const named = await rawRequest(`${locked.url}/v1/sessions`, {
      headers: { host: `vis.internal:${locked.port}`, authorization: `Bearer ${TOKEN}` },
    })
    assert.equal(named.status, 200)
    assert.equal(
      (await rawRequest(`${open.url}/v1/sessions`, { headers: { host: 'vis.internal' } })).status,
      421,
    )
  })

  test("an Origin other than the server's own or the CORS list is 403, whatever the request", async () => {
    const before = sessions(open)
    const attempts: [string, Record<string, string>, string | undefined][] = [
      ['POST', { 'content-type': 'application/json' }, JSON.stringify({ roots: [root] })],
      ['POST', { 'content-type': 'text/plain' }, JSON.stringify({ roots: [root] })],
      ['GET', {}, undefined],
      [
        'OPTIONS',
        { 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
        undefined,
      ],
    ]
    for (const origin of [
      'http://evil.example',
      'null',
      `http://127.0.0.2:${open.port}`,
      `http://localhost:${open.port + 1}`,
    ]) {
      for (const [method, headers, body] of attempts) {
        const r = await rawRequest(`${open.url}/v1/sessions`, {
          method,
          headers: { ...headers, origin },
          body,
        })
        assert.equal(r.status, 403, `${method} from ${origin}`)
        assert.equal(r.body.error.code, 'http.origin-not-allowed')
        assert.equal(r.headers['access-control-allow-origin'], undefined, 'no CORS grant')
      }
    }
    assert.equal(sessions(open), before, 'no session was created')
    // The server's own origin (its page) is served, under any loopback name it is reached by.
    const own = await rawRequest(`${open.url}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: open.url },
      body: JSON.stringify({ title: 'own page' }),
    })
    assert.equal(own.status, 201, own.text)
    const viaName = await rawRequest(`${open.url}/v1/sessions`, {
      headers: { host: `localhost:${open.port}`, origin: `http://localhost:${open.port}` },
    })
    assert.equal(viaName.status, 200)
  })

  test('CORS preflight is answered only for the configured origins', async () => {
    const preflight = await rawRequest(`${locked.url}/v1/sessions`, {
      method: 'OPTIONS',
      headers: {
        origin: OWN_PAGE,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, idempotency-key',
      },
    })
    assert.equal(preflight.status, 204, 'a preflight carries no token and needs none')
    assert.equal(preflight.headers['access-control-allow-origin'], OWN_PAGE)
    assert.match(String(preflight.headers['access-control-allow-headers']), /Authorization/)
    assert.match(String(preflight.headers['access-control-allow-headers']), /Idempotency-Key/)
    assert.match(String(preflight.headers['access-control-allow-methods']), /POST/)
    // The actual request still needs the token.
    const anon = await rawRequest(`${locked.url}/v1/sessions`, { headers: { origin: OWN_PAGE } })
    assert.equal(anon.status, 401)
    const ok = await rawRequest(`${locked.url}/v1/sessions`, {
      headers: { origin: OWN_PAGE, authorization: `Bearer ${TOKEN}` },
    })
    assert.equal(ok.status, 200)
    assert.equal(ok.headers['access-control-allow-origin'], OWN_PAGE)
    assert.match(String(ok.headers['access-control-expose-headers']), /Location/)
    const other = await rawRequest(`${locked.url}/v1/sessions`, {
      method: 'OPTIONS',
      headers: { origin: 'http://ui.example:5174', 'access-control-request-method': 'POST' },
    })
    assert.equal(other.status, 403)
  })

  test('bodies must be JSON: 415 for text/plain, forms, multipart and untyped bodies', async () => {
    const before = sessions(open)
    const body = JSON.stringify({ roots: [root] })
    for (const type of [
      'text/plain',
      'text/plain;charset=UTF-8',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonp',
      'text/json',
    ]) {
      const r = await rawRequest(`${open.url}/v1/sessions`, {
        method: 'POST',
        headers: { 'content-type': type },
        body,
      })
      assert.equal(r.status, 415, type)
      assert.equal(r.body.error.code, 'http.unsupported-media-type')
      assert.match(r.body.error.message, /application\/json/)
    }
    const untyped = await rawRequest(`${open.url}/v1/sessions`, { method: 'POST', body })
    assert.equal(untyped.status, 415)
    // An empty form post is still a form.
    const emptyForm = await rawRequest(`${open.url}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '0' },
    })
    assert.equal(emptyForm.status, 415)
    assert.equal(sessions(open), before)
    for (const type of ['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON']) {
      const r = await rawRequest(`${open.url}/v1/sessions`, {
        method: 'POST',
        headers: { 'content-type': type },
        body: JSON.stringify({ title: type }),
      })
      assert.equal(r.status, 201, type)
    }
    // No body at all, as `curl -X POST` sends: the defaults.
    const bare = await rawRequest(`${open.url}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-length': '0' },
    })
    assert.equal(bare.status, 201, bare.text)
  })

  test('the token works as a bearer and as ?token=, never as a cookie', async () => {
    const url = `${locked.url}/v1/sessions`
    assert.equal((await rawRequest(url)).status, 401)
    assert.equal(
      (await rawRequest(url, { headers: { authorization: 'Bearer nope-nope-nope-nope' } })).status,
      401,
    )
    assert.equal((await rawRequest(`${url}?token=nope`)).status, 401)
    assert.equal((await rawRequest(url, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200)
    // ?token= is taken by every route (the printed URL) and is no query parameter of theirs.
    const q = await rawRequest(`${url}?token=${TOKEN}&state=open`)
    assert.equal(q.status, 200, q.text)
    // Visiting a URL with the token sets no cookie (cookies ignore ports: every other server on
    // this host would be sent it), and a cookie holding the token authorizes nothing.
    const visit = await rawRequest(`${locked.url}/?token=${TOKEN}`, {
      headers: { accept: 'text/html', 'sec-fetch-mode': 'navigate' },
    })
    assert.equal(visit.status, 200)
    assert.equal(visit.headers['set-cookie'], undefined)
    for (const cookie of [`vis_token=${TOKEN}`, `vis_token_0123abcd=${TOKEN}`, `token=${TOKEN}`]) {
      const r = await rawRequest(url, { headers: { cookie } })
      assert.equal(r.status, 401, cookie)
      assert.equal(r.body.error.code, 'http.unauthorized')
    }
    // The page's own files load without the token (GET only); nothing else does.
    const shell = await rawRequest(`${locked.url}/`, { headers: { accept: 'text/html' } })
    assert.equal(shell.status, 200)
    assert.equal((await rawRequest(`${locked.url}/ui/authed.js`)).status, 200)
    assert.equal((await rawRequest(`${locked.url}/`, { method: 'POST' })).status, 401)
    // A browser without the token gets a page saying what to do, an API client the envelope.
    const page = await rawRequest(url, { headers: { accept: 'text/html' } })
    assert.equal(page.status, 401)
    assert.match(page.text, /\?token=/)
    const api = await rawRequest(url)
    assert.equal(api.body.error.code, 'http.unauthorized')
  })

  test('health stays open but tells the home path only to a caller with the token', async () => {
    const anon = await rawRequest(`${locked.url}/v1/health`)
    assert.equal(anon.status, 200)
    assert.equal(anon.body.ok, true)
    assert.equal(anon.body.home, undefined)
    assert.equal(anon.body.bind_address, undefined)
    assert.ok(!anon.text.includes(lockedHome), 'the home path is not in the answer')
    const authed = await rawRequest(`${locked.url}/v1/health`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    })
    assert.equal(authed.body.home, lockedHome)
  })

  test('a route added after createApp gets the same rules', async () => {
    const app = createApp(locked.engine, { token: TOKEN })
    let reached = 0
    app.post('/v1/extra', (c) => {
      reached++
      return c.json({ ok: true })
    })
    const server = createAdaptorServer({ fetch: app.fetch })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
    const port = (server.address() as import('node:net').AddressInfo).port
    const url = `http://127.0.0.1:${port}/v1/extra`
    const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }
    try {
      assert.equal(
        (await rawRequest(url, { method: 'POST', headers: { ...auth, host: 'evil.test' }, body: '{}' }))
          .status,
        421,
      )
      assert.equal(
        (
          await rawRequest(url, {
            method: 'POST',
            headers: { ...auth, origin: 'http://evil.example' },
            body: '{}',
          })
        ).status,
        403,
      )
      assert.equal(
        (
          await rawRequest(url, {
            method: 'POST',
            headers: { ...auth, 'content-type': 'text/plain' },
            body: '{}',
          })
        ).status,
        415,
      )
      assert.equal(
        (
          await rawRequest(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{}',
          })
        ).status,
        401,
      )
      assert.equal(reached, 0)
      assert.equal((await rawRequest(url, { method: 'POST', headers: auth, body: '{}' })).status, 200)
      assert.equal(reached, 1)
      // MCP's Streamable HTTP endpoint is mounted inside the app: the same guards come first.
      const mcp = `http://127.0.0.1:${port}/mcp`
      const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} })
      const mcpHeaders = { ...auth, accept: 'application/json, text/event-stream' }
      assert.equal(
        (await rawRequest(mcp, { method: 'POST', headers: { ...mcpHeaders, host: 'evil.test' }, body: init }))
          .status,
        421,
      )
      assert.equal(
        (
          await rawRequest(mcp, {
            method: 'POST',
            headers: { ...mcpHeaders, origin: 'http://evil.example' },
            body: init,
          })
        ).status,
        403,
      )
    } finally {
      await new Promise((r) => server.close(r))
    }
  })
})

describe('vis serve and its token', () => {
  const children: ChildProcess[] = []
  after(() => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
  })
  const serve = async (args: string[]) => {
    const s = await spawnServe(['--pool', '0', ...args], {
      ...process.env,
      VIS_HOME: tempHome('http-guards-serve').home,
      VIS_TOKEN: '',
    })
    children.push(s.child)
    return s
  }

  test('without VIS_TOKEN it makes a random token and prints the URL carrying it', async () => {
    const s = await serve([])
    const m = /open: (http:\/\/127\.0\.0\.1:\d+)\/\?token=([\w-]{43})$/m.exec(s.out())
    assert.ok(m, s.out())
    const [, base, token] = m
    assert.equal((await client(base!)('GET', '/v1/sessions')).status, 401)
    assert.equal(
      (await client(base!, { authorization: `Bearer ${token}` })('GET', '/v1/sessions')).status,
      200,
    )
    assert.match(s.out(), new RegExp(`curl -s -H "Authorization: Bearer ${token}"`))
    // Its CPython is staged here: nothing to say about one missing.
    assert.doesNotMatch(s.err(), /no CPython/)
    s.child.kill('SIGTERM')
    const other = await serve([])
    assert.notEqual(/\?token=(\S+)/.exec(other.out())![1], token, 'a new token each start')
    other.child.kill('SIGTERM')
  })

  test('--no-token opts out loudly, and only on loopback', async () => {
    const s = await serve(['--no-token'])
    assert.match(s.err(), /WARNING --no-token/)
    const base = /serving (\S+)/.exec(s.out())![1]!
    assert.equal((await client(base)('GET', '/v1/sessions')).status, 200)
    s.child.kill('SIGTERM')
    const wide = await serve(['--no-token', '--host', '0.0.0.0'])
    await waitFor(() => wide.child.exitCode !== null, 30_000, 'vis serve to refuse')
    assert.equal(wide.child.exitCode, 2, 'a usage error')
    assert.match(wide.err(), /--no-token is for loopback binds only/)
  })
})
