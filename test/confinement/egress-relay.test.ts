// The relays between two sockets (the sandbox's forwarder, the proxy's CONNECT tunnels) must
// not lose what is still queued towards one side when the other side finishes first.
// Real sockets throughout: a unix-socket server stands in for the proxy behind the forwarder.
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startEgressForwarder } from '../../src/confinement/egress/forwarder.js'
import { startEgressProxy } from '../../src/confinement/egress/proxy.js'

const SIZE = 8 * 1024 * 1024
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex')

// Reads a socket much slower than loopback fills it (at most 64 KiB a millisecond), so the
// kernel buffers stay full and the relay has data queued in user space when the sender
// finishes. This paces the reader; it waits for no condition.
function slowRead(s: Socket): Promise<Buffer> {
  s.pause()
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = []
    let ended = false
    s.once('end', () => {
      ended = true
      resolve(Buffer.concat(parts))
    })
    s.once('error', reject)
    s.once('close', () => {
      if (!ended) reject(new Error(`closed without end after ${Buffer.concat(parts).length} bytes`))
    })
    const step = () => {
      const chunk = s.read(65536) ?? s.read()
      if (chunk) parts.push(chunk)
      if (!s.readableEnded && !s.destroyed) setTimeout(step, 1)
    }
    step()
  })
}

const event = (e: NodeJS.EventEmitter, name: string) => new Promise<void>((r) => e.once(name, () => r()))

// A unix-socket server in a fresh directory; `onSocket` plays the proxy's side.
async function upstream(
  onSocket: (s: Socket) => void,
): Promise<{ path: string; server: Server; done(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'vis-relay-'))
  const path = join(dir, 'up.sock')
  const server = createServer({ allowHalfOpen: true }, onSocket)
  await new Promise<void>((r) => server.listen(path, () => r()))
  return {
    path,
    server,
    done: () => {
      server.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

async function tcp(port: number): Promise<Socket> {
  const s = connect({ host: '127.0.0.1', port, allowHalfOpen: true })
  await event(s, 'connect')
  return s
}

// The forwarder in front of `up` for the length of fn; both are closed after.
async function viaForwarder(
  up: Awaited<ReturnType<typeof upstream>>,
  fn: (port: number) => Promise<void>,
  lingerMs?: number,
): Promise<void> {
  const fwd = await startEgressForwarder({ port: 0, socketPath: up.path, lingerMs })
  try {
    await fn(fwd.port)
  } finally {
    await fwd.close()
    up.done()
  }
}

test('forwarder: a body the proxy side sends and closes on reaches a slow guest whole, then a clean end', async () => {
  // A chunked response's last write is small and comes after the body (its terminating
  // chunk): it reaches the relay as its own read while the guest's buffers are full.
  const tail = Buffer.from('0\r\n\r\n')
  const body = Buffer.concat([randomBytes(SIZE), tail])
  const up = await upstream((s) => {
    s.resume()
    s.write(body.subarray(0, SIZE), () => s.end(tail))
  })
  const fwd = await startEgressForwarder({ port: 0, socketPath: up.path })
  try {
    for (let i = 0; i < 3; i++) {
      const client = await tcp(fwd.port)
      const got = await slowRead(client)
      assert.equal(got.length, body.length, 'the whole body, not a truncated one')
      assert.equal(sha(got), sha(body))
      client.end()
    }
  } finally {
    await fwd.close()
    up.done()
  }
})

test('forwarder: a 403 sent while the guest is still uploading arrives whole; the rest of the upload is dropped', async () => {
  const refusal = `HTTP/1.1 403 vis egress refused: rule\r\ncontent-length: 12\r\nconnection: close\r\n\r\nrefused: no\n`
  const up = await upstream((s) => {
    // Answers on the first bytes and closes at once, as the proxy does for a refused POST.
    s.once('data', () => s.end(refusal))
  })
  const fwd = await startEgressForwarder({ port: 0, socketPath: up.path })
  try {
    const client = await tcp(fwd.port)
    client.pause()
    client.on('error', () => {})
    client.write('POST http://example.org/ HTTP/1.1\r\nhost: example.org\r\ncontent-length: 16777216\r\n\r\n')
    // Like http.client, sends the whole body before reading the answer. The relay must read
    // and drop it after the refusal: unread input would make its close a reset, and a reset
    // makes the guest's kernel discard the 403 it has not read yet.
    const sent = await new Promise<Error | null | undefined>((r) =>
      client.write(randomBytes(16 * 1024 * 1024), r),
    )
    assert.equal(sent ?? null, null, 'the upload is taken (and dropped), not reset')
    const answer = await slowRead(client)
    assert.equal(answer.toString(), refusal)
    client.end()
    await event(client, 'close')
  } finally {
    await fwd.close()
    up.done()
  }
})

test('forwarder: a request the guest sends and closes on reaches a slow proxy side whole', async () => {
  const request = randomBytes(SIZE)
  let received: Promise<Buffer> | undefined
  const up = await upstream((s) => {
    received = slowRead(s)
    // Our answer to its FIN, so the guest's connection ends (the relay does not cut a reply).
    void received.then(
      () => s.end(),
      () => undefined,
    )
  })
  const fwd = await startEgressForwarder({ port: 0, socketPath: up.path })
  try {
    const client = await tcp(fwd.port)
    client.resume()
    client.end(request)
    await event(client, 'close')
    while (!received) await new Promise((r) => setImmediate(r))
    const got = await received
    assert.equal(got.length, request.length)
    assert.equal(sha(got), sha(request))
  } finally {
    await fwd.close()
    up.done()
  }
})

test('forwarder: a guest that never closes its half is cut after the bound; turning the network off cuts live relays', async () => {
  const up = await upstream((s) => {
    s.resume()
    s.end('bye')
  })
  const fwd = await startEgressForwarder({ port: 0, socketPath: up.path, lingerMs: 300 })
  try {
    const lingering = await tcp(fwd.port)
    lingering.on('error', () => {})
    assert.equal((await slowRead(lingering)).toString(), 'bye')
    // Still writable from here (the relay drains it) until the bound cuts the connection.
    let writes = 0
    while (!lingering.destroyed) {
      lingering.write('x')
      writes++
      await new Promise((r) => setTimeout(r, 20))
    }
    assert.ok(writes > 1, 'writes after the FIN were accepted before the cut')
  } finally {
    await fwd.close()
    up.done()
  }

  // A relay in the middle of a conversation: close() cuts both sides at once.
  let upSide: Socket | undefined
  const up2 = await upstream((s) => {
    upSide = s
    s.write('hello')
  })
  const fwd2 = await startEgressForwarder({ port: 0, socketPath: up2.path })
  try {
    const client = await tcp(fwd2.port)
    client.on('error', () => {})
    await event(client, 'data')
    assert.ok(upSide)
    upSide.on('error', () => {})
    // Neither peer has ended: both ends see the forwarder's side go away.
    const upEnded = event(upSide, 'end')
    const clientEnded = event(client, 'end')
    await fwd2.close()
    await Promise.all([upEnded, clientEnded])
    client.destroy()
    upSide.destroy()
  } finally {
    up2.done()
  }
})

// A CONNECT tunnel through a real proxy to `target` (listening here on a loopback port):
// the client socket, the CONNECT already written; close() stops the proxy and the target.
async function tunnelTo(target: Server): Promise<{ client: Socket; close(): Promise<void> }> {
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()))
  const port = (target.address() as { port: number }).port
  const proxy = await startEgressProxy({ allow: ['127.0.0.1'], deny: [] })
  const client = connect({ path: proxy.socketPath, allowHalfOpen: true })
  await event(client, 'connect')
  client.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n\r\n`)
  return {
    client,
    close: async () => {
      await proxy.close()
      target.close()
    },
  }
}

const ESTABLISHED = 'HTTP/1.1 200 Connection Established\r\n\r\n'

test('proxy CONNECT tunnel: a body the target sends and closes on reaches a slow client whole', async () => {
  const body = randomBytes(SIZE)
  const tunnel = await tunnelTo(
    createServer((s) => {
      s.resume()
      s.end(body)
    }),
  )
  try {
    const got = await slowRead(tunnel.client)
    assert.equal(got.subarray(0, ESTABLISHED.length).toString(), ESTABLISHED)
    const tunnelled = got.subarray(ESTABLISHED.length)
    assert.deepEqual([tunnelled.length, sha(tunnelled)], [body.length, sha(body)])
    tunnel.client.end()
  } finally {
    await tunnel.close()
  }
})

// Reads the tunnel's 200 first, so what follows goes through the tunnel, not in the CONNECT's packet.
async function established(client: Socket): Promise<void> {
  client.pause()
  while ((client.readableLength ?? 0) < ESTABLISHED.length) await event(client, 'readable')
  assert.equal(client.read(ESTABLISHED.length).toString(), ESTABLISHED)
}

test('proxy CONNECT tunnel: an answer the target sends and closes on while the client still uploads arrives whole', async () => {
  const answer = 'HTTP/1.1 413 too large\r\ncontent-length: 0\r\nconnection: close\r\n\r\n'
  const tunnel = await tunnelTo(
    createServer({ allowHalfOpen: true }, (s) => {
      s.once('data', () => s.end(answer))
    }),
  )
  const { client } = tunnel
  try {
    client.on('error', () => {})
    await established(client)
    client.write('PUT /big HTTP/1.1\r\nhost: t\r\ncontent-length: 16777216\r\n\r\n')
    const sent = await new Promise<Error | null | undefined>((r) =>
      client.write(randomBytes(16 * 1024 * 1024), r),
    )
    assert.equal(sent ?? null, null, 'the upload is taken (and dropped), not reset')
    assert.equal((await slowRead(client)).toString(), answer)
    client.end()
  } finally {
    await tunnel.close()
  }
})

test('forwarder + real proxy: a refused POST with a large body gets the 403 whole, the guest reading after its upload', async () => {
  const proxy = await startEgressProxy({ allow: ['example.com'], deny: [] })
  const fwd = await startEgressForwarder({ port: 0, socketPath: proxy.socketPath })
  try {
    for (let i = 0; i < 3; i++) {
      const client = await tcp(fwd.port)
      client.pause()
      client.on('error', () => {})
      const size = 16 * 1024 * 1024
      client.write(
        `POST http://example.org/upload HTTP/1.1\r\nhost: example.org\r\ncontent-length: ${size}\r\n\r\n`,
      )
      const sent = await new Promise<Error | null | undefined>((r) => client.write(randomBytes(size), r))
      assert.equal(sent ?? null, null, 'the upload is taken, not reset')
      client.end()
      const answer = (await slowRead(client)).toString()
      assert.match(answer, /^HTTP\/1\.1 403 vis egress refused: /)
      // The whole chunked body, to its terminating chunk.
      assert.match(
        answer,
        /\r\nvis egress refused: example\.org:80 is not on the allow list[^\r]*\r\n0\r\n\r\n$/,
      )
    }
  } finally {
    await fwd.close()
    await proxy.close()
  }
})

// A server that reads a request until its client half-closes, then answers and closes: what
// `nc -N`, HTTP/1.0-style clients and `sock.shutdown(SHUT_WR)` in guest code rely on.
function untilEof(reply: (request: Buffer) => Buffer): (s: Socket) => void {
  return (s) => {
    const parts: Buffer[] = []
    s.on('data', (d: Buffer) => parts.push(d))
    s.once('end', () => s.end(reply(Buffer.concat(parts))))
  }
}

test('forwarder: a guest that half-closes after its request still reads the whole reply, then both close', async () => {
  const reply = randomBytes(SIZE)
  let seen = ''
  const up = await upstream(
    untilEof((request) => {
      seen = sha(request)
      return reply
    }),
  )
  // A bound far longer than the test: the relay must close because both directions ended.
  await viaForwarder(
    up,
    async (port) => {
      const request = randomBytes(256 * 1024)
      const client = await tcp(port)
      const got = slowRead(client)
      client.end(request)
      const answer = await got
      assert.equal(seen, sha(request), 'the request reached the upstream whole, then its FIN')
      assert.deepEqual([answer.length, sha(answer)], [reply.length, sha(reply)], 'the whole reply')
      await event(client, 'close')
    },
    600_000,
  )
})

test('forwarder: after a guest half-closes, a reply slower than the linger bound arrives whole; only silence past the reply bound cuts', async () => {
  const reply = randomBytes(256 * 1024)
  // Answers 1 s after the guest's FIN: past the 200 ms linger bound, within the reply bound.
  const up = await upstream((s) => {
    s.resume()
    s.once('end', () => setTimeout(() => s.end(reply), 1000))
  })
  const fwd = await startEgressForwarder({ port: 0, socketPath: up.path, lingerMs: 200, replyIdleMs: 60_000 })
  try {
    const client = await tcp(fwd.port)
    const parts: Buffer[] = []
    client.on('data', (d: Buffer) => parts.push(d))
    const ended = event(client, 'end')
    client.end('request')
    await ended
    const answer = Buffer.concat(parts)
    assert.deepEqual([answer.length, sha(answer)], [reply.length, sha(reply)])
  } finally {
    await fwd.close()
    up.done()
  }
  // A far side that stays silent past the reply bound (it never answers nor ends) is cut: the
  // guest's connection closes with nothing read.
  const silent = await upstream((s) => s.resume())
  const cutting = await startEgressForwarder({
    port: 0,
    socketPath: silent.path,
    lingerMs: 200,
    replyIdleMs: 300,
  })
  try {
    const client = await tcp(cutting.port)
    let read = 0
    client.on('data', (d: Buffer) => {
      read += d.length
    })
    const closed = event(client, 'close')
    client.end('request')
    await closed
    assert.equal(read, 0)
  } finally {
    await cutting.close()
    silent.done()
  }
})

test('proxy CONNECT tunnel: a client that half-closes after its request still reads the whole reply', async () => {
  const reply = randomBytes(SIZE)
  const tunnel = await tunnelTo(
    createServer(
      { allowHalfOpen: true },
      untilEof(() => reply),
    ),
  )
  const { client } = tunnel
  try {
    await established(client)
    const got = slowRead(client)
    client.end('one request, then EOF')
    const tunnelled = await got
    assert.deepEqual([tunnelled.length, sha(tunnelled)], [reply.length, sha(reply)])
    await event(client, 'close')
  } finally {
    await tunnel.close()
  }
})
