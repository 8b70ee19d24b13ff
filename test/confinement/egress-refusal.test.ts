// The egress proxy's own answers (a refusal above all) must reach the guest whatever the timing.
// http.client sends a request's headers and its body in two writes; under load the proxy
// could refuse on the headers and close before the forwarder (another process, in the worker)
// relayed the body, and the forwarder's write of that body then failed with EPIPE and took the
// unread 403 with it: the guest saw "Remote end closed connection without response".
// Reproduced here without load: the forwarder runs in its own process and is stopped (SIGSTOP)
// the moment the proxy decides, and continued once the proxy has sent its whole answer.
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { startEgressForwarder } from '../../src/confinement/egress/forwarder.js'
import { type EgressProxy, startEgressProxy } from '../../src/confinement/egress/proxy.js'
import { waitFor } from '../sessions/helpers.js'

const FORWARDER = new URL('./egress-forwarder-process.ts', import.meta.url).pathname
const RULES = { allow: [{ host: 'lab.test', access: 'read-only' as const }], deny: [] }
const REFUSAL = "vis egress refused: lab.test:8080: POST is not allowed by 'lab.test (read-only)'"
const HEAD = [
  'POST http://lab.test:8080/p HTTP/1.1',
  'Host: lab.test:8080',
  'Content-Length: 3',
  'Content-Type: application/x-www-form-urlencoded',
  'Connection: close',
  '',
  '',
].join('\r\n')

// The proxy's server-side sockets, in the order their responses finished (node's own channel).
const answered: Socket[] = []
const onFinish = (m: unknown) => answered.push((m as { socket: Socket }).socket)
subscribe('http.server.response.finish', onFinish)
after(() => unsubscribe('http.server.response.finish', onFinish))

// The proxy's socket for the `seen`-th response, once it has written the whole answer and its
// FIN (or closed outright).
async function answerSent(seen: number): Promise<Socket> {
  const done = () => {
    const s = answered[seen]
    return s !== undefined && (s.writableFinished || s.destroyed)
  }
  await waitFor(done, 60_000, 'the proxy to finish its answer')
  return answered[seen] as Socket
}

// A client of the proxy's unix socket (the forwarder's side), half-open like the forwarder.
async function proxyClient(proxy: EgressProxy): Promise<Socket> {
  const client = connect({ path: proxy.socketPath, allowHalfOpen: true })
  await new Promise((r) => client.once('connect', r))
  return client
}

// Everything the peer sends until it closes; never rejects (a reset ends it too).
function received(s: Socket): Promise<{ text: string; error?: string }> {
  const parts: Buffer[] = []
  s.on('data', (d: Buffer) => parts.push(d))
  return new Promise((resolve) => {
    let error: string | undefined
    s.on('error', (e: NodeJS.ErrnoException) => {
      error = e.code ?? e.message
    })
    s.once('close', () => resolve({ text: Buffer.concat(parts).toString(), error }))
  })
}

async function forwarderProcess(socketPath: string): Promise<{ child: ChildProcess; port: number }> {
  // --jitless as in the worker (its stderr, the worker log's stand-in, is kept for a failure).
  const child = spawn(process.execPath, ['--jitless', '--import', 'tsx', FORWARDER], {
    env: { ...process.env, VIS_EGRESS_SOCKET: socketPath, VIS_EGRESS_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stderr?.on('data', (d) => {
    err += d
  })
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.on('data', (d) => {
      out += d
      if (out.includes('\n')) resolve(Number(out.trim()))
    })
    child.once('exit', (code) => reject(new Error(`forwarder exited (${code}) before listening: ${err}`)))
  })
  return { child, port }
}

const processState = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '')[0]

// Stops a process and returns once the kernel says it is stopped, so it runs no more code.
function stop(pid: number): void {
  process.kill(pid, 'SIGSTOP')
  while (processState(pid) !== 'T') {}
}

test('a refused POST whose body reaches the forwarder after the proxy has answered still gets the 403 with its reason', async () => {
  let onDecision = () => {}
  const proxy: EgressProxy = await startEgressProxy(RULES, { onDecision: () => onDecision() })
  const fwd = await forwarderProcess(proxy.socketPath)
  const pid = fwd.child.pid as number
  try {
    for (let i = 0; i < 3; i++) {
      const guest = connect({ host: '127.0.0.1', port: fwd.port })
      await new Promise((r) => guest.once('connect', r))
      guest.setNoDelay(true)
      const answer = received(guest)
      const seen = answered.length
      // At the decision, before the proxy writes its answer: the forwarder stops, and the
      // body's write lands in its queue ahead of the answer (as a guest thread racing it does).
      const decided = new Promise<void>((resolve) => {
        onDecision = () => {
          stop(pid)
          guest.write('x=1')
          resolve()
        }
      })
      guest.write(HEAD)
      await decided
      // The proxy has written its whole answer and its FIN (or closed outright).
      await answerSent(seen)
      process.kill(pid, 'SIGCONT')
      const { text, error } = await answer
      assert.equal(error, undefined, `the guest's connection was not reset (round ${i})`)
      assert.match(
        text,
        new RegExp(`^HTTP/1\\.1 403 ${REFUSAL.replace(/[.()]/g, '\\$&')}\\r\\n`),
        `round ${i}`,
      )
      assert.ok(text.includes(`\r\n${REFUSAL}\n`), 'the body names the rule')
      assert.ok(text.endsWith('\r\n0\r\n\r\n'), 'the whole chunked body, to its terminating chunk')
    }
  } finally {
    fwd.child.kill('SIGCONT')
    fwd.child.kill('SIGKILL')
    await proxy.close()
  }
})

// The same promise at the proxy alone: a client may keep writing its request after the answer.
test('the proxy reads what a refused client still sends after the answer, then closes when the client does', async () => {
  const proxy = await startEgressProxy(RULES)
  try {
    const client = await proxyClient(proxy)
    const answer = received(client)
    const seen = answered.length
    client.write(HEAD)
    const server = await answerSent(seen)
    assert.equal(server.destroyed, false, 'the proxy still reads after answering')
    // The body after the answer, and more: taken and dropped, not refused with EPIPE.
    const wrote = await new Promise<Error | null | undefined>((r) =>
      client.write(`x=1${'y'.repeat(65536)}`, r),
    )
    assert.equal(wrote ?? null, null)
    client.end()
    const { text, error } = await answer
    assert.equal(error, undefined)
    assert.match(text, /^HTTP\/1\.1 403 vis egress refused: lab\.test:8080: POST is not allowed/)
    assert.ok(text.endsWith('\r\n0\r\n\r\n'))
    await waitFor(() => server.destroyed, 60_000, 'the proxy to close after the client did')
  } finally {
    await proxy.close()
  }
})

test('a client that never closes after a refusal is cut after the linger bound', async () => {
  const proxy = await startEgressProxy(RULES, { lingerMs: 200 })
  try {
    const client = await proxyClient(proxy)
    const parts: Buffer[] = []
    client.on('data', (d: Buffer) => parts.push(d))
    const ended = new Promise((r) => client.once('end', r))
    const seen = answered.length
    client.write(`${HEAD}x=1`)
    await ended
    assert.match(Buffer.concat(parts).toString(), /^HTTP\/1\.1 403 /)
    await waitFor(() => answered[seen] !== undefined, 60_000, 'the proxy to answer')
    // The client keeps its half open and sends nothing more: the bound closes the proxy's side.
    await waitFor(
      () => (answered[seen] as Socket).destroyed,
      60_000,
      'the bound to close the lingering connection',
    )
    assert.equal(client.writableEnded, false, 'the client never closed its half')
    client.destroy()
  } finally {
    await proxy.close()
  }
})

test('a forwarder that cannot reach the host proxy answers the guest with a 502 naming why, and logs it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vis-refusal-'))
  const missing = join(dir, 'egress.sock')
  const logged: string[] = []
  const fwd = await startEgressForwarder({ port: 0, socketPath: missing, log: (l) => logged.push(l) })
  try {
    // An absolute-URI request (urllib's form through HTTP_PROXY) and a CONNECT (https).
    for (const request of [
      'POST http://lab.test:8080/p HTTP/1.1\r\nhost: lab.test:8080\r\ncontent-length: 3\r\n\r\nx=1',
      'CONNECT lab.test:443 HTTP/1.1\r\nhost: lab.test:443\r\n\r\n',
    ]) {
      const guest = connect({ host: '127.0.0.1', port: fwd.port })
      await new Promise((r) => guest.once('connect', r))
      const answer = received(guest)
      guest.write(request)
      const { text, error } = await answer
      assert.equal(error, undefined)
      const reason = 'vis egress: cannot reach the host egress proxy (ENOENT)'
      assert.ok(text.startsWith(`HTTP/1.1 502 ${reason}\r\n`), text)
      assert.ok(text.endsWith(`\r\n\r\n${reason}\n`), text)
    }
    assert.equal(logged.length, 2)
    for (const line of logged) assert.equal(line, `cannot reach the host egress proxy (ENOENT) at ${missing}`)
  } finally {
    await fwd.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a request the proxy cannot parse gets a 400 naming the parser error, and the connection lingers as after any answer', async () => {
  const proxy = await startEgressProxy(RULES)
  try {
    const client = await proxyClient(proxy)
    const answer = received(client)
    client.write('NOT HTTP AT ALL\r\n\r\n')
    // What follows the unparsable request is read and dropped until the client ends.
    await new Promise((r) => client.once('data', r))
    const wrote = await new Promise<Error | null | undefined>((r) => client.write('y'.repeat(65536), r))
    assert.equal(wrote ?? null, null)
    client.end()
    const { text, error } = await answer
    assert.equal(error, undefined)
    assert.match(text, /^HTTP\/1\.1 400 Bad Request\r\n/)
    assert.match(text, /\r\n\r\nvis egress: Bad Request \(HPE_[A-Z_]+\)\n$/)
  } finally {
    await proxy.close()
  }
})

test('a refused tunnel: the 403 names the rule, what the client still sends is drained, and the proxy closes when the client does', async () => {
  const proxy = await startEgressProxy(RULES)
  // The proxy's side of the one connection this test makes (node's own channel).
  const accepted: Socket[] = []
  const onSocket = (m: unknown) => accepted.push((m as { socket: Socket }).socket)
  subscribe('net.server.socket', onSocket)
  try {
    const client = await proxyClient(proxy)
    await waitFor(() => accepted.length === 1, 60_000, 'the proxy to accept the connection')
    const server = accepted[0] as Socket
    const answer = received(client)
    client.write('CONNECT lab.test:443 HTTP/1.1\r\nhost: lab.test:443\r\n\r\n')
    await new Promise((r) => client.once('data', r))
    // A client that sends its first TLS bytes before reading the answer.
    const wrote = await new Promise<Error | null | undefined>((r) =>
      client.write(Buffer.alloc(65536, 0x16), r),
    )
    assert.equal(wrote ?? null, null)
    client.end()
    const { text, error } = await answer
    assert.equal(error, undefined)
    assert.match(
      text,
      /^HTTP\/1\.1 403 vis egress refused: lab\.test:443: 'lab\.test \(read-only\)' limits HTTP methods/,
    )
    await waitFor(
      () => server.destroyed,
      30_000,
      'the proxy to close the refused tunnel after the client did',
    )
  } finally {
    unsubscribe('net.server.socket', onSocket)
    await proxy.close()
  }
})
