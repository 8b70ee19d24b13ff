// ATTACK (surface 3/5, the event stream; limits a request sets to starve the server): an SSE
// client that stops reading is cut only once it is `maxQueuedFrames` (10 000) FRAMES behind
// (src/http/sse.ts), whatever those frames weigh. A frame carries what the sandbox chose: a
// block's output (up to the 1 MiB output cap) and its value (up to 1 MiB more). So one stalled
// stream keeps every frame of every block in the server's memory, encoded for it alone: 10 000
// frames can be gigabytes, and each further stalled stream (256 per peer) holds its own copy.
// Here: one raw connection opens the session's stream and never reads; the session runs 100
// blocks that each print 1 MB and end with a 1 MB value. Node's arrayBuffers (where the queued
// frames live) grow by ~100 MiB on the current code (about 12 MiB when the same reader reads); a
// stream that far behind should be cut (it reconnects with Last-Event-ID and loses nothing), so
// the growth must stay under 40 MiB.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startServer } from '../../src/http/index.js'
import { client, python } from '../http/helpers.js'

const TOKEN = 'attack13b-sse-token-0123456789abcdef'

test('a stalled event-stream reader does not hold unbounded sandbox output in the server', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-sse-home-'))
  const saved = process.env.VIS_HOME
  process.env.VIS_HOME = home
  let server: Awaited<ReturnType<typeof startServer>> | undefined
  let stalled: Socket | undefined
  try {
    server = await startServer({ home, python, port: 0, pool: { size: 0 }, extensions: false, token: TOKEN })
    const call = client(server.url, { authorization: `Bearer ${TOKEN}` })
    const s = (await call('POST', '/v1/sessions', {})).body
    const { port } = new URL(server.url)
    // The stalled reader: asks for the stream, reads the response head, then never reads again.
    stalled = connect({ host: '127.0.0.1', port: Number(port) })
    stalled.write(
      `GET /v1/sessions/${s.id}/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\nAccept: text/event-stream\r\n\r\n`,
    )
    let head = ''
    await new Promise<void>((res, rej) => {
      stalled!.on('error', rej)
      const onData = (d: Buffer) => {
        head += d.toString('latin1')
        if (head.includes('\r\n\r\n')) {
          stalled!.off('data', onData)
          stalled!.pause()
          res()
        }
      }
      stalled!.on('data', onData)
    })
    assert.match(head, /^HTTP\/1\.1 200 /)
    const warm = await call('POST', `/v1/sessions/${s.id}/blocks`, { code: 'print(1)' })
    assert.equal(warm.status, 200, warm.text)
    const base = process.memoryUsage().arrayBuffers
    let peak = 0
    for (let i = 0; i < 100; i++) {
      const r = await call('POST', `/v1/sessions/${s.id}/blocks`, {
        code: `print('o' * 1_000_000)\n'v' * 1_000_000`,
      })
      assert.equal(r.status, 200, r.text.slice(0, 300))
      peak = Math.max(peak, process.memoryUsage().arrayBuffers - base)
    }
    const mib = Math.round(peak / 2 ** 20)
    assert.ok(
      peak < 40 * 2 ** 20,
      `one stalled event-stream reader made the server hold ${mib} MiB of frames (100 blocks of 1 MB output and a 1 MB value)`,
    )
  } finally {
    stalled?.destroy()
    await server?.close()
    if (saved === undefined) delete process.env.VIS_HOME
    else process.env.VIS_HOME = saved
    rmSync(home, { recursive: true, force: true })
  }
})
