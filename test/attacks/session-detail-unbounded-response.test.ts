// ATTACK (surface 1/5, a request that starves the server; what the server serves from what a
// sandbox wrote): `GET /v1/sessions/{id}` (what the session page loads, with ?format=display,
// whenever a person opens a session; `vis sessions show` reads the same) answers the session
// "with its blocks": EVERY block with its whole stdout, value, result and error, read from the
// database, built into one object and serialised, synchronously, on the event loop that serves
// every session. Nothing pages or bounds it: each block may carry 1 MiB of output and 1 MiB of
// value (the caps are per block), so a model that ran a few hundred such blocks has made a session
// whose every view costs the server hundreds of MiB and seconds of a stopped event loop (and past
// V8's longest string, ~512 MiB, the route can only fail).
// Here: 120 blocks each print 1 MB and end with a 1 MB value (240 MB of history); then the
// page's request for the session is sent while a timer measures the server's event-loop stalls.
// On the current code one request stops the loop for ~8 s here and answers 229 MiB.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startServer } from '../../src/http/index.js'
import { client, python } from '../http/helpers.js'

test("one view of a session's history does not stop the server", async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-detail-home-'))
  const saved = process.env.VIS_HOME
  process.env.VIS_HOME = home
  let server: Awaited<ReturnType<typeof startServer>> | undefined
  let ticker: NodeJS.Timeout | undefined
  try {
    server = await startServer({ home, python, port: 0, pool: { size: 0 }, extensions: false })
    const call = client(server.url)
    const s = (await call('POST', '/v1/sessions', {})).body
    for (let i = 0; i < 120; i++) {
      const r = await call('POST', `/v1/sessions/${s.id}/blocks`, {
        code: `print('o' * 1_000_000)\n'v' * 1_000_000`,
      })
      assert.equal(r.status, 200, r.text.slice(0, 300))
    }
    let last = performance.now()
    let worst = 0
    ticker = setInterval(() => {
      const now = performance.now()
      worst = Math.max(worst, now - last)
      last = now
    }, 10)
    const res = await fetch(`${server.url}/v1/sessions/${s.id}?format=display`)
    const size = (await res.arrayBuffer()).byteLength
    clearInterval(ticker)
    assert.equal(res.status, 200)
    assert.ok(
      worst < 1_000 && size < 64 * 2 ** 20,
      `one GET of the session answered ${Math.round(size / 2 ** 20)} MiB and stopped the server's event loop for ${Math.round(worst)} ms`,
    )
  } finally {
    clearInterval(ticker)
    await server?.close()
    if (saved === undefined) delete process.env.VIS_HOME
    else process.env.VIS_HOME = saved
    rmSync(home, { recursive: true, force: true })
  }
})
