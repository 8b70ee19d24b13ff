// ATTACK (surface 5, the SSE byte bound; "many streams per session, memory on the server"): the
// thirteenth pass bounded what ONE event-stream reader that stops reading may hold: it is dropped
// once its queued frames pass 10 000 frames or 16 MiB (src/http/sse.ts, maxQueuedBytes). The
// bound is per stream and nothing bounds the streams together: every stream encodes its own copy
// of each frame (`encoder.encode(frame(ev))` per subscriber), and one session may have as many
// streams as the connection caps allow (256 per peer, 1024 in all), so N stalled readers of one
// session hold N x 16 MiB of sandbox output in the server (4 GiB from one peer, 16 GiB in all),
// the same unbounded host memory the fix was for, multiplied instead of accumulated.
// Here: 24 raw connections open the same session's stream, read the response head and never read
// again; the session runs 24 blocks that each print 1 MB and end with a 1 MB value (the caps).
// Node's arrayBuffers (where the queued frames live) grow by 24 x ~16 MiB on the current code;
// with the streams' frames bounded together (or shared), the growth stays far under 128 MiB.
// Both directions: a reading client of the same session still receives the last block's events.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import type { Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startServer } from '../../src/http/index.js'
import { client, python } from '../http/helpers.js'
import { stalledStream } from './fixtures/stalled-event-stream.js'

const TOKEN = 'attack14b-sse-many-token-0123456789abcdef'
const STREAMS = 24
const BLOCKS = 24

test('many stalled event-stream readers of one session do not multiply the per-stream byte bound', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-sse-many-home-'))
  const saved = process.env.VIS_HOME
  process.env.VIS_HOME = home
  let server: Awaited<ReturnType<typeof startServer>> | undefined
  const stalled: Socket[] = []
  try {
    server = await startServer({ home, python, port: 0, pool: { size: 0 }, extensions: false, token: TOKEN })
    const call = client(server.url, { authorization: `Bearer ${TOKEN}` })
    const s = (await call('POST', '/v1/sessions', {})).body
    const port = Number(new URL(server.url).port)
    for (let i = 0; i < STREAMS; i++) stalled.push(await stalledStream(port, s.id, TOKEN))
    const warm = await call('POST', `/v1/sessions/${s.id}/blocks`, { code: 'print(1)' })
    assert.equal(warm.status, 200, warm.text)
    const base = process.memoryUsage().arrayBuffers
    let peak = 0
    for (let i = 0; i < BLOCKS; i++) {
      const r = await call('POST', `/v1/sessions/${s.id}/blocks`, {
        code: `print('o' * 1_000_000)\n'v' * 1_000_000`,
      })
      assert.equal(r.status, 200, r.text.slice(0, 300))
      peak = Math.max(peak, process.memoryUsage().arrayBuffers - base)
    }
    const mib = Math.round(peak / 2 ** 20)
    assert.ok(
      peak < 128 * 2 ** 20,
      `${STREAMS} stalled event-stream readers of one session made the server hold ${mib} MiB of frames ` +
        `(${BLOCKS} blocks of 1 MB output and a 1 MB value; one reader's bound is 16 MiB)`,
    )
    // Allowed: a client that reads gets the session's events (replayed from the log).
    const ctl = new AbortController()
    const res = await fetch(`${server.url}/v1/sessions/${s.id}/events?after=0`, {
      headers: { authorization: `Bearer ${TOKEN}` },
      signal: ctl.signal,
    })
    assert.equal(res.status, 200)
    const reader = res.body!.getReader()
    const dec = new TextDecoder()
    let seen = ''
    let finished = 0
    while (finished < BLOCKS + 1) {
      const { value, done } = await reader.read()
      if (done) break
      seen += dec.decode(value, { stream: true })
      const parts = seen.split('\n\n')
      seen = parts.pop() ?? ''
      finished += parts.filter((p) => p.includes('event: block.finished')).length
    }
    ctl.abort()
    assert.equal(finished, BLOCKS + 1, 'a reading client did not receive every block.finished')
  } finally {
    for (const sock of stalled) sock.destroy()
    await server?.close()
    if (saved === undefined) delete process.env.VIS_HOME
    else process.env.VIS_HOME = saved
    rmSync(home, { recursive: true, force: true })
  }
})
