// ATTACK (surface 1, the SSE memory budget; "replay with Last-Event-ID, many streams"): the
// fourteenth pass bounded the frames every event stream of the server queues, together
// (src/http/sse-budget.ts: 64 MiB in all, 32 MiB a session), and encodes a LIVE frame once for
// all its streams. But a frame leaves the budget the moment the stream hands it to the HTTP
// adapter (`deliver` releases it on `controller.enqueue`), and the adapter writes it to the
// socket and only then waits for `drain`: for a reader that stopped reading, the last frame
// handed over sits in the socket's user-space write buffer for as long as the connection lives,
// counted by nothing. A live frame is one shared copy, so that is one copy for every stalled
// reader; a REPLAYED frame (a stream opened with `?after=` / `Last-Event-ID`, or with neither, so
// from the start) is read from the log as a fresh event and encoded for that stream alone. So N
// readers that replay a session with big events and then stop reading each pin their own copy of
// a multi-MiB frame outside the budget: N x (a block's output and value), bounded only by the
// connection caps (256 per peer, 1024 in all), not by the 64 MiB the budget promises.
// Here: a session runs blocks that each print 1 MB and end with a 1 MB value (the caps); then
// STREAMS raw connections open its event stream from the start, read the response head and never
// read again. Node's arrayBuffers (where frames live) grow past the whole server's budget (all the
// streams are of ONE session, whose own bound is 32 MiB; the 64 MiB checked leaves room for what
// this process's own client sockets read ahead, ~64 KiB each).
// Both directions: a reading client of the same session still receives every block's events.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import type { Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startServer } from '../../src/http/index.js'
import { DEFAULT_MAX_QUEUED_BYTES_TOTAL } from '../../src/http/sse-budget.js'
import { client, python } from '../http/helpers.js'
import { buffersHeld, collect, settledPeak } from './fixtures/host-memory.js'
import { stalledStream } from './fixtures/stalled-event-stream.js'

const TOKEN = 'attack15b-sse-replay-token-0123456789abcdef'
const STREAMS = 160
const BLOCKS = 6

test('readers that replay a session and stop reading do not hold frames past the server-wide budget', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-sse-replay-home-'))
  const saved = process.env.VIS_HOME
  process.env.VIS_HOME = home
  let server: Awaited<ReturnType<typeof startServer>> | undefined
  const stalled: Socket[] = []
  try {
    server = await startServer({ home, python, port: 0, pool: { size: 0 }, extensions: false, token: TOKEN })
    const call = client(server.url, { authorization: `Bearer ${TOKEN}` })
    const created = await call('POST', '/v1/sessions', {})
    assert.equal(created.status, 201, created.text)
    const s = created.body
    const port = Number(new URL(server.url).port)
    for (let i = 0; i < BLOCKS; i++) {
      const r = await call('POST', `/v1/sessions/${s.id}/blocks`, {
        code: `print('o' * 1_000_000)\n'v' * 1_000_000`,
      })
      assert.equal(r.status, 200, r.text.slice(0, 300))
    }
    // What the server HOLDS is measured: garbage is collected before each sample (frames of the
    // streams the budget dropped, refused ones), or the peak is whenever V8 last collected.
    collect()
    const base = buffersHeld()
    for (let i = 0; i < STREAMS; i++) stalled.push(await stalledStream(port, s.id, TOKEN, '?after=0'))
    // Each stream replays until its socket stops taking bytes; wait until the server's memory
    // stops growing (no new peak for a while), or is far past the budget.
    const peak = await settledPeak(base, buffersHeld, {
      quiet: 30,
      ceiling: 4 * DEFAULT_MAX_QUEUED_BYTES_TOTAL,
    })
    const mib = Math.round(peak / 2 ** 20)
    assert.ok(
      peak < DEFAULT_MAX_QUEUED_BYTES_TOTAL,
      `${STREAMS} readers that replayed a session from the start and stopped reading made the server hold ` +
        `${mib} MiB of frames, past the ${DEFAULT_MAX_QUEUED_BYTES_TOTAL / 2 ** 20} MiB all streams together may queue ` +
        `(${BLOCKS} blocks of 1 MB output and a 1 MB value)`,
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
    while (finished < BLOCKS) {
      const { value, done } = await reader.read()
      if (done) break
      seen += dec.decode(value, { stream: true })
      const parts = seen.split('\n\n')
      seen = parts.pop() ?? ''
      finished += parts.filter((p) => p.includes('event: block.finished')).length
    }
    ctl.abort()
    assert.equal(finished, BLOCKS, 'a reading client did not receive every block.finished')
  } finally {
    for (const sock of stalled) sock.destroy()
    await server?.close()
    if (saved === undefined) delete process.env.VIS_HOME
    else process.env.VIS_HOME = saved
    rmSync(home, { recursive: true, force: true })
  }
})
