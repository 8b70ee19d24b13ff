// Plain answers share the server's budget with the event streams (src/http/answer-budget.ts,
// sixteenth outsider pass): an answer built in memory (a stored block with ~0.8 MB of output that
// JSON escapes six times over) asked for on many connections that read the head and stop makes the
// server close the ones holding the most once the session's share of the budget is full, instead
// of holding a copy per connection. The connections it keeps get every byte when they read, and so
// does a client that reads at once. (Attachments are read from their file a piece at a time, so
// they no longer fill the budget: test/http/attachment-streamed.test.ts.)
import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { test } from 'node:test'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { DEFAULT_MAX_QUEUED_BYTES_TOTAL } from '../../src/http/sse-budget.js'
import { tempHome, testServer, waitFor } from './helpers.js'

const TOKEN = 'answer-budget-token-0123456789abcdef'
const CONNECTIONS = 24
// Characters of output JSON writes as \u0001: about 4.6 MiB of answer.
const CHARS = 800_000

setFlagsFromString('--expose-gc')
const collect = runInNewContext('gc') as () => void
const held = () => {
  const m = process.memoryUsage()
  return m.arrayBuffers + m.heapUsed
}

type Stalled = { socket: Socket; bytes: () => number; closed: () => boolean }

// Sends a GET and reads only up to the end of the head; the rest stays unread (paused).
function stalledGet(port: number, path: string): Promise<Stalled> {
  const socket = connect({ host: '127.0.0.1', port })
  let got = Buffer.alloc(0)
  let closed = false
  let head = -1
  let body = 0
  socket.on('close', () => {
    closed = true
  })
  return new Promise((resolve, reject) => {
    socket.once('error', reject)
    socket.on('data', (d: Buffer) => {
      if (head >= 0) {
        body += d.byteLength
        return
      }
      got = Buffer.concat([got, d])
      const at = got.indexOf('\r\n\r\n')
      if (at >= 0) {
        head = at
        body = got.byteLength - at - 4
        socket.pause()
        socket.off('error', reject)
        socket.on('error', () => undefined)
        const line = got.subarray(0, at).toString('latin1')
        if (!/^HTTP\/1\.1 200 /.test(line)) reject(new Error(line))
        resolve({ socket, bytes: () => body, closed: () => closed })
      }
    })
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`)
  })
}

test('connections that stop reading a large block answer are closed past the budget; readers get it whole', async () => {
  const { home } = tempHome('http-answer-budget')
  const { server, call } = await testServer({ home, pool: { size: 0 }, extensions: false, token: TOKEN })
  const stalled: Stalled[] = []
  try {
    const s = (await call('POST', '/v1/sessions', {})).body
    const ran = await call('POST', `/v1/sessions/${s.id}/blocks`, {
      code: `print('\\x01' * ${CHARS})`,
    })
    assert.equal(ran.status, 200, ran.text.slice(0, 300))
    assert.equal(ran.body.error, null, JSON.stringify(ran.body.error))
    const path = `/v1/sessions/${s.id}/blocks/${ran.body.id}`
    // A client that reads gets every byte.
    const whole = await fetch(server.url + path, { headers: { authorization: `Bearer ${TOKEN}` } })
    assert.equal(whole.status, 200)
    const expected = Buffer.from(await whole.arrayBuffer())
    const SIZE = expected.byteLength
    assert.ok(SIZE > 4 * 2 ** 20, `the block's answer is ${SIZE} bytes`)
    assert.equal(
      JSON.parse(expected.toString('utf8')).stdout.length,
      CHARS + 1,
      'a reading client got the block',
    )

    const port = Number(new URL(server.url).port)
    collect()
    const base = held()
    let peak = 0
    for (let i = 0; i < CONNECTIONS; i++) {
      stalled.push(await stalledGet(port, path))
      collect()
      peak = Math.max(peak, held() - base)
    }
    const mib = Math.round(peak / 2 ** 20)
    assert.ok(
      peak < DEFAULT_MAX_QUEUED_BYTES_TOTAL,
      `${CONNECTIONS} stalled readers of a ${SIZE >> 20} MiB block answer made the server hold ${mib} MiB`,
    )

    // Now every one of them reads: the ones the server kept get the attachment whole, the ones it
    // closed to make room end short (and there are some: 24 × 4.6 MiB is past the session's share).
    for (const r of stalled) r.socket.resume()
    await waitFor(() => stalled.every((r) => r.closed() || r.bytes() >= SIZE), 60_000, 'every reader to end')
    const cut = stalled.filter((r) => r.bytes() < SIZE).length
    assert.ok(cut > 0, 'no stalled connection was closed: the answers were held for every one of them')
    assert.ok(cut < CONNECTIONS, 'the server closed even the last stalled reader')
    for (const r of stalled) assert.ok(r.bytes() <= SIZE)
  } finally {
    for (const r of stalled) r.socket.destroy()
    await server.close()
  }
})
