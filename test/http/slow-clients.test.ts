// Issue 30 §6: the HTTP server under slow or hostile clients, over raw sockets on loopback. A
// body that never finishes held its connection forever (requestTimeout is 0 so a block may wait
// as long as it needs); a 401 answered before the body kept the connection waiting for it; and
// nothing capped how many connections one client, or all of them, could hold.
import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { after, before, describe, test } from 'node:test'
import type { VisServer } from '../../src/http/server.js'
import { tempHome, testServer, waitFor } from './helpers.js'

const { home, root } = tempHome('http-slow-clients')
const TOKEN = 'slow-clients-token-0123456789abcdef'
const BODY_TIMEOUT_MS = 600

// A raw connection: what it received, and whether the server closed it.
type Raw = { socket: Socket; text: () => string; closed: () => boolean }

async function open(url: string, localAddress = '127.0.0.1'): Promise<Raw> {
  const { hostname, port } = new URL(url)
  const socket = connect({ host: hostname, port: Number(port), localAddress })
  let text = ''
  let closed = false
  socket.setEncoding('utf8')
  socket.on('data', (d) => {
    text += d
  })
  // The server's FIN (or a reset): either way the connection is over.
  socket.on('end', () => {
    closed = true
  })
  socket.on('close', () => {
    closed = true
  })
  socket.on('error', () => undefined)
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  return { socket, text: () => text, closed: () => closed }
}

const head = (method: string, path: string, headers: Record<string, string>) =>
  `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`

const statusOf = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)
const errorCode = (text: string) => {
  const body = text.slice(text.indexOf('\r\n\r\n') + 4)
  try {
    return JSON.parse(body).error.code as string
  } catch {
    return undefined
  }
}

const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }

describe('slow bodies', () => {
  let server: VisServer
  before(async () => {
    ;({ server } = await testServer({
      home,
      pool: { size: 0 },
      token: TOKEN,
      bodyTimeoutMs: BODY_TIMEOUT_MS,
    }))
  })
  after(async () => {
    await server.close()
  })

  test('a body that never finishes is answered 408 and closed after the body timeout', async () => {
    // A route hono serves (it reads the body first) and the fast block route.
    for (const path of ['/v1/sessions/ses_nope/interrupt', '/v1/sessions/ses_nope/blocks']) {
      const c = await open(server.url)
      const t0 = Date.now()
      c.socket.write(head('POST', path, { ...auth, 'content-length': '100' }))
      c.socket.write('{"code": ')
      await waitFor(c.closed, 20_000, `${path}: the server to close the connection`)
      const waited = Date.now() - t0
      assert.ok(waited >= BODY_TIMEOUT_MS - 50, `${path}: closed after ${waited} ms, before the timeout`)
      assert.equal(statusOf(c.text()), 408, c.text())
      assert.equal(errorCode(c.text()), 'http.body-timeout')
      assert.match(c.text(), /connection: close/i)
      c.socket.destroy()
    }
  })

  test('the rest of a body sent after its 408 runs nothing', async () => {
    const created = await fetch(`${server.url}/v1/sessions`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ roots: [root] }),
    })
    assert.equal(created.status, 201)
    const id = ((await created.json()) as { id: string }).id
    const blocks = `/v1/sessions/${id}/blocks`
    const c = await open(server.url)
    const body = JSON.stringify({ code: 'print("too late")' })
    c.socket.write(head('POST', blocks, { ...auth, 'content-length': String(body.length) }))
    c.socket.write(body.slice(0, 3))
    // The moment the 408 arrives, the rest of the body follows: it must not complete the request.
    let sent = false
    c.socket.on('data', () => {
      if (!sent && statusOf(c.text()) === 408) {
        sent = true
        c.socket.write(body.slice(3))
      }
    })
    await waitFor(c.closed, 20_000, 'the close after the 408')
    assert.equal(statusOf(c.text()), 408, c.text())
    assert.ok(sent)
    c.socket.destroy()
    // A block submitted now runs after any the late body would have submitted (a session runs
    // its blocks in order), so once it is done, the session's blocks are all there are.
    const next = await fetch(`${server.url}${blocks}`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ code: 'print("next")' }),
    })
    assert.equal(next.status, 200, await next.clone().text())
    const session = await (await fetch(`${server.url}/v1/sessions/${id}`, { headers: auth })).json()
    const codes = (session as { blocks: { code: string }[] }).blocks.map((b) => b.code)
    assert.deepEqual(codes, ['print("next")'])
  })

  test('a slow body that finishes within the timeout is served, on a connection that stays', async () => {
    const c = await open(server.url)
    const body = '{"block_id": "blk_nope"}'
    c.socket.write(
      head('POST', '/v1/sessions/ses_nope/interrupt', { ...auth, 'content-length': String(body.length) }),
    )
    c.socket.write(body.slice(0, 5))
    await new Promise((r) => setImmediate(r))
    c.socket.write(body.slice(5))
    await waitFor(() => statusOf(c.text()) !== 0, 10_000, 'the answer')
    // Read whole: session.not-found, the route's own answer.
    assert.equal(statusOf(c.text()), 404, c.text())
    await waitFor(() => errorCode(c.text()) !== undefined, 10_000, 'the body')
    assert.equal(errorCode(c.text()), 'session.not-found')
    assert.equal(c.closed(), false)
    // The connection takes the next request.
    c.socket.write(head('GET', '/v1/health', {}))
    await waitFor(() => /HTTP\/1\.1 200/.test(c.text()), 10_000, 'the second answer')
    c.socket.destroy()
  })
})

describe('a refusal before the body', () => {
  let server: VisServer
  before(async () => {
    // The default body timeout (30 s): the close below cannot be the timeout's.
    ;({ server } = await testServer({ home, pool: { size: 0 }, token: TOKEN }))
  })
  after(async () => {
    await server.close()
  })

  test('401 without the token, body never sent: the connection closes after the answer', async () => {
    for (const path of ['/v1/sessions', '/v1/sessions/ses_nope/blocks']) {
      const c = await open(server.url)
      c.socket.write(head('POST', path, { 'content-type': 'application/json', 'content-length': '1000' }))
      await waitFor(c.closed, 10_000, `${path}: the server to close after its 401`)
      assert.equal(statusOf(c.text()), 401, c.text())
      assert.equal(errorCode(c.text()), 'http.unauthorized')
      assert.match(c.text(), /connection: close/i)
      c.socket.destroy()
    }
  })

  test('413 for a declared length past the limit: closed too', async () => {
    const big = await open(server.url)
    big.socket.write(head('POST', '/v1/sessions', { ...auth, 'content-length': String(2 * 1024 * 1024) }))
    await waitFor(big.closed, 10_000, 'the close after 413')
    assert.equal(statusOf(big.text()), 413, big.text())
    assert.equal(errorCode(big.text()), 'http.body-too-large')
    assert.match(big.text(), /connection: close/i)
    big.socket.destroy()
  })
})

describe('connection caps', () => {
  let server: VisServer
  const conns: Raw[] = []
  before(async () => {
    ;({ server } = await testServer({
      home,
      pool: { size: 0 },
      token: TOKEN,
      maxConnections: 4,
      maxConnectionsPerPeer: 2,
      trustedProxies: ['127.0.0.5'],
    }))
  })
  after(async () => {
    for (const c of conns) c.socket.destroy()
    await server.close()
  })

  const hold = async (localAddress: string) => {
    const c = await open(server.url, localAddress)
    conns.push(c)
    return c
  }
  // A connection the server took and answers on: one refused for a connection of an earlier
  // test that the server has not seen close yet is replaced.
  const served = async (localAddress: string, headers: Record<string, string> = {}) => {
    for (let tries = 0; tries < 100; tries++) {
      const c = await hold(localAddress)
      if ((await health(c, headers)) === 200) return c
      await release(c)
    }
    throw new Error(`no connection from ${localAddress} was served`)
  }
  const release = async (c: Raw) => {
    c.socket.destroy()
    conns.splice(conns.indexOf(c), 1)
  }
  const health = async (c: Raw, headers: Record<string, string> = {}) => {
    const before = c.text().length
    c.socket.write(head('GET', '/v1/health', headers))
    await waitFor(() => statusOf(c.text().slice(before)) !== 0, 10_000, 'an answer')
    return statusOf(c.text().slice(before))
  }

  test('per peer: the third connection from one address gets 503 and is closed; another address is served', async () => {
    const a = [await served('127.0.0.1'), await served('127.0.0.1')]
    const third = await hold('127.0.0.1')
    await waitFor(third.closed, 10_000, 'the refusal to close')
    assert.equal(statusOf(third.text()), 503, third.text())
    assert.equal(errorCode(third.text()), 'http.too-many-peer-connections')
    assert.match(third.text(), /retry-after: 1/i)
    // X-Forwarded-For from a peer that is not a trusted proxy counts for nothing.
    await release(third)
    const spoof = await hold('127.0.0.1')
    spoof.socket.write(head('GET', '/v1/health', { 'x-forwarded-for': '10.9.9.9' }))
    await waitFor(spoof.closed, 10_000, 'the spoofer refused as itself')
    assert.equal(errorCode(spoof.text()), 'http.too-many-peer-connections')
    await release(spoof)
    // The two held connections still work, and so does another peer.
    assert.equal(await health(a[0]!), 200)
    const other = await served('127.0.0.2')
    assert.equal(await health(other), 200)
    for (const c of [...a, other]) await release(c)
  })

  test('in total: past maxConnections every peer gets 503; a freed slot serves again', async () => {
    const held = [
      await served('127.0.0.1'),
      await served('127.0.0.2'),
      await served('127.0.0.3'),
      await served('127.0.0.3'),
    ]
    const fifth = await hold('127.0.0.4')
    await waitFor(fifth.closed, 10_000, 'the refusal to close')
    assert.equal(statusOf(fifth.text()), 503, fifth.text())
    assert.equal(errorCode(fifth.text()), 'http.too-many-connections')
    await release(fifth)
    await release(held.pop()!)
    // The server notices the close on its side before the slot is free.
    await waitFor(
      async () => {
        const c = await hold('127.0.0.4')
        const status = await health(c)
        await release(c)
        return status === 200
      },
      10_000,
      'a freed slot',
    )
    for (const c of held) await release(c)
  })

  test('behind a trusted proxy the peer is the forwarded client, counted per request in flight', async () => {
    // The proxy holds more connections than one peer may (it is many clients); requests for one
    // forwarded client are capped while they are answered.
    const proxied = [
      await served('127.0.0.5', { 'x-forwarded-for': '10.0.0.7' }),
      await served('127.0.0.5', { 'x-forwarded-for': '10.0.0.8' }),
      await served('127.0.0.5', { 'x-forwarded-for': '10.0.0.9' }),
    ]
    // Two requests for 10.0.0.1 in flight (their bodies still coming).
    for (const c of proxied.slice(0, 2)) {
      c.socket.write(
        head('POST', '/v1/sessions/ses_nope/interrupt', {
          ...auth,
          'content-length': '100',
          'x-forwarded-for': '10.0.0.1',
        }),
      )
    }
    const third = proxied[2]!
    // Through a chain of trusted proxies, the client is the rightmost untrusted address.
    const seen = third.text().length
    const refused = () => third.text().slice(seen)
    third.socket.write(head('GET', '/v1/health', { 'x-forwarded-for': '10.0.0.1, 127.0.0.5' }))
    await waitFor(() => errorCode(refused()) !== undefined, 10_000, 'the refusal')
    assert.equal(statusOf(refused()), 503, refused())
    assert.equal(errorCode(refused()), 'http.too-many-peer-connections')
    assert.match(refused(), /"peer":"10\.0\.0\.1"/)
    // The proxy's connection stays (other clients' requests ride on it): another client is served.
    assert.equal(third.closed(), false)
    assert.equal(await health(third, { 'x-forwarded-for': '10.0.0.2' }), 200)
    for (const c of proxied) await release(c)
  })
})
