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
// Attachments are now sent from their file a piece at a time (they pin 256 KiB), so the pressure
// here is the largest answer a route builds in memory: a block GET of V's block with 1M escaped
// control characters of output, ~7 MB of JSON, of which each slow download pins the ~3.3 MB the
// kernel did not take at once. Several downloads of it (a page's readers on a slow link, 32 KiB a
// second each) fill V's 32 MiB share until less is free than one such block's answer.
// Allowed direction first: a block's output reaches V's event stream, and its POST is answered.
// Then, once the downloads are past the draining window and fill the share, a block prints the
// same large output and a marker: the stream (which kept up all along) must stay open and carry
// it, and the block's POST must be answered whole.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startServer } from '../../src/http/index.js'
import { DRAINING_WINDOW_MS, SseBudget } from '../../src/http/sse-budget.js'
import { client, openEvents, python } from '../http/helpers.js'
import { LARGE_ANSWER_BLOCK, readWhole, trickleReader, until } from './fixtures/host-memory.js'

const TOKEN = 'attack18b-sse-dropped-by-download-0123456789'

test("slow downloads of a session's answers do not close the session's event stream", async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack18b-sse-download-home-'))
  const saved = process.env.VIS_HOME
  process.env.VIS_HOME = home
  const budget = new SseBudget()
  let server: Awaited<ReturnType<typeof startServer>> | undefined
  const downloads: Array<ReturnType<typeof trickleReader>> = []
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
    const ran = await call('POST', `/v1/sessions/${v.id}/blocks`, { code: LARGE_ANSWER_BLOCK })
    assert.equal(ran.status, 200, ran.text.slice(0, 300))
    const blockPath = `/v1/sessions/${v.id}/blocks/${ran.body.id}`
    const whole = await readWhole(port, blockPath, TOKEN)
    assert.equal(whole.body, whole.length, 'the block read alone')
    events = await openEvents(`${server.url}/v1/sessions/${v.id}/events`, auth)
    assert.equal(events.status, 200)

    // Allowed: a block's output reaches the stream, its POST is answered.
    const first = await call('POST', `/v1/sessions/${v.id}/blocks`, { code: 'print("marker-before")' })
    assert.equal(first.status, 200, first.text.slice(0, 300))
    await events.waitFor((evs) => JSON.stringify(evs).includes('marker-before'), 60_000, 'the first marker')

    // Slow downloads of the block until less is free in V's share than one answer of it takes,
    // past the draining window (so the first count as draining by reading, not by being new).
    const start = Date.now()
    const free = () => budget.maxSessionBytes - budget.queuedBytes
    await until(
      () => `the downloads to fill the share (${budget.queuedBytes} held by ${downloads.length})`,
      () => {
        if (downloads.some((d) => d.state.closed)) throw new Error('a download was closed')
        if (free() >= whole.length && downloads.every((d) => d.state.head !== '')) {
          downloads.push(trickleReader(port, blockPath, TOKEN, 32 * 1024, 1000))
          return false
        }
        return (
          Date.now() - start > DRAINING_WINDOW_MS * 1.5 &&
          downloads.every((d) => d.state.head.startsWith('HTTP/1.1 200 ')) &&
          free() < whole.length - 2 ** 20
        )
      },
    )
    const readSoFar = downloads.map((d) => d.state.read)

    let answered = 'answered'
    try {
      const second = await call('POST', `/v1/sessions/${v.id}/blocks`, {
        code: `${LARGE_ANSWER_BLOCK.split('\n')[0]}\nprint("marker-after")\n'ab' * 500_000`,
      })
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
      `while ${downloads.length} clients downloaded session V's ~7 MB block at 32 KiB a second ` +
        `(${readSoFar.join(', ')} bytes read in ${Math.round((Date.now() - start) / 1000)} s), V's event stream, which kept up, ${events.ended ? 'was closed' : 'stayed open'} ` +
        `and ${carried ? 'carried' : 'never carried'} the block's output, and the block's POST was ${answered}: the ` +
        `draining downloads held the session's ${budget.maxSessionBytes / 2 ** 20} MiB share and every other answer of the session was refused`,
    )
  } finally {
    for (const d of downloads) d.stop()
    await events?.close()
    await server?.close()
    if (saved === undefined) delete process.env.VIS_HOME
    else process.env.VIS_HOME = saved
    rmSync(home, { recursive: true, force: true })
  }
})
