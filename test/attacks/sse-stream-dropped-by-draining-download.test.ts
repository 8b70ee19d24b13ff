// ATTACK (surface 1, "draining" holders and a session's own bound): SECURITY.md (Slow and hostile
// clients) promises that an event-stream reader that keeps up "holds almost nothing, so stalled
// readers cannot push it out", and "Readers that keep up get every byte". Since the seventeenth
// pass a plain answer whose socket took a piece in the last 10 s is "draining" and is never closed
// for its own session's bound: the one asking does not fit instead (sse-budget.ts `take`). The
// one asking may be the session's event stream, which holds nothing: `evict` finds no stalled
// holder heavier than it, the frame does not fit, and the stream is dropped (sse.ts). An answer is
// charged for the whole buffer it pins until half of it went, so ONE download of a session's
// 32 MiB attachment (the largest a file may be), read slowly or just started, fills the session's
// 32 MiB share for minutes, and every frame of the session's live stream is refused: the stream
// is closed, and every other answer of the session (a block's POST answer included) is cut after
// its head. Even an honest slow download does this to the session's page.
// Here: session V has a 32 MiB attachment. Allowed direction first: a block's output reaches V's
// event stream, and its POST is answered. Then a client downloads the attachment at 64 KiB a
// second; once V's share is full, a block prints a marker: the stream (which kept up all along)
// must stay open and carry it, and the block's POST must be answered.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { MAX_OUTBOX_FILE_BYTES } from '../../src/engine/outbox-files.js'
import { startServer } from '../../src/http/index.js'
import { DRAINING_WINDOW_MS, SseBudget } from '../../src/http/sse-budget.js'
import { client, openEvents, python } from '../http/helpers.js'

const TOKEN = 'attack18b-sse-dropped-by-download-0123456789'

// A download on a slow link: the head, then `perTick` bytes every `everyMs`.
function trickle(port: number, path: string, perTick: number, everyMs: number) {
  const sock: Socket = connect({ host: '127.0.0.1', port })
  sock.on('error', () => undefined)
  sock.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`)
  const state = { head: '', read: 0 }
  let buf = Buffer.alloc(0)
  let thisTick = 0
  sock.on('data', (d: Buffer) => {
    if (!state.head) {
      buf = Buffer.concat([buf, d])
      const end = buf.indexOf('\r\n\r\n')
      if (end >= 0) state.head = buf.subarray(0, end).toString('latin1')
    }
    state.read += d.length
    thisTick += d.length
    if (thisTick >= perTick) sock.pause()
  })
  const timer = setInterval(() => {
    thisTick = 0
    sock.resume()
  }, everyMs)
  return {
    state,
    stop: () => {
      clearInterval(timer)
      sock.destroy()
    },
  }
}

test("a slow download of a session's attachment does not close the session's event stream", async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack18b-sse-download-home-'))
  const saved = process.env.VIS_HOME
  process.env.VIS_HOME = home
  const budget = new SseBudget()
  let server: Awaited<ReturnType<typeof startServer>> | undefined
  let download: ReturnType<typeof trickle> | undefined
  let events: Awaited<ReturnType<typeof openEvents>> | undefined
  try {
    server = await startServer({
      home,
      python,
      port: 0,
      pool: { size: 0 },
      extensions: false,
      token: TOKEN,
      budget,
    })
    const auth = { authorization: `Bearer ${TOKEN}` }
    const call = client(server.url, auth)
    const port = Number(new URL(server.url).port)
    const v = (await call('POST', '/v1/sessions', {})).body
    const ran = await call('POST', `/v1/sessions/${v.id}/blocks`, {
      code: `import os\nopen(os.path.join(VIS_OUTBOX, "f.bin"), "wb").write(os.urandom(${MAX_OUTBOX_FILE_BYTES}))\nNone`,
    })
    assert.equal(ran.status, 200, ran.text.slice(0, 300))
    const att = ran.body.attachments?.[0]
    assert.ok(att?.id, JSON.stringify(ran.body).slice(0, 300))
    events = await openEvents(`${server.url}/v1/sessions/${v.id}/events`, auth)
    assert.equal(events.status, 200)

    // Allowed: a block's output reaches the stream, its POST is answered.
    const first = await call('POST', `/v1/sessions/${v.id}/blocks`, { code: 'print("marker-before")' })
    assert.equal(first.status, 200, first.text.slice(0, 300))
    await events.waitFor((evs) => JSON.stringify(evs).includes('marker-before'), 60_000, 'the first marker')

    // A slow download of the attachment, until it fills the session's share.
    download = trickle(port, `/v1/sessions/${v.id}/attachments/${att.id}`, 64 * 1024, 1000)
    const start = Date.now()
    // Past the draining window, so the download counts as draining by reading, not by being new.
    while (
      !(
        Date.now() - start > DRAINING_WINDOW_MS * 1.5 &&
        download.state.head.startsWith('HTTP/1.1 200 ') &&
        budget.queuedBytes >= budget.maxSessionBytes - 4096
      )
    ) {
      if (Date.now() - start > 120_000)
        throw new Error(`the download never filled the share (${budget.queuedBytes})`)
      await new Promise((r) => setTimeout(r, 50))
    }

    let answered = 'answered'
    try {
      const second = await call('POST', `/v1/sessions/${v.id}/blocks`, { code: 'print("marker-after")' })
      if (second.status !== 200) answered = `answered ${second.status}`
    } catch (err) {
      answered = `cut after its head (${(err as Error).message})`
    }
    let carried = true
    try {
      await events.waitFor((evs) => JSON.stringify(evs).includes('marker-after'), 60_000, 'the second marker')
    } catch {
      carried = false
    }
    assert.ok(
      carried && answered === 'answered' && !events.ended,
      `while one client downloaded session V's ${MAX_OUTBOX_FILE_BYTES / 2 ** 20} MiB attachment at 64 KiB a second ` +
        `(${download.state.read} bytes read in ${Math.round((Date.now() - start) / 1000)} s), V's event stream, which kept up, ${events.ended ? 'was closed' : 'stayed open'} ` +
        `and ${carried ? 'carried' : 'never carried'} the block's output, and the block's POST was ${answered}: the ` +
        "draining download held the session's whole 32 MiB share and every other answer of the session was refused",
    )
  } finally {
    download?.stop()
    await events?.close()
    await server?.close()
    if (saved === undefined) delete process.env.VIS_HOME
    else process.env.VIS_HOME = saved
    rmSync(home, { recursive: true, force: true })
  }
})
