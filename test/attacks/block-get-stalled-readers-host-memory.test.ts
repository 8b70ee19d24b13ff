// ATTACK (surface 1, memory not in the budget: "readers that pull once then stall"): the event
// streams' queued frames are charged to one server-wide budget (64 MiB, src/http/sse-budget.ts),
// because a stalled reader otherwise holds what the sandbox printed for as long as it likes
// (SECURITY.md, Slow and hostile clients: "`requestTimeout` stays 0 ..., so the server bounds the
// rest itself"). But a plain answer is the same bytes: `GET /v1/sessions/{id}/blocks/{blockId}`
// answers the WHOLE block (its stdout up to the 1 MiB output cap, JSON-escaped: six bytes for each
// control character, and its value up to ~1 MiB), written to the socket at once; what the kernel
// does not take stays in the server's memory until the client reads it, and nothing bounds how
// many clients do that, or for how long. One block, stored once, is asked for again and again on
// connections that read the response head and stop: every one of them pins its own copy (and the
// copies the server made to build it).
// Here: one block prints 1M characters of U+0001 and ends with a 1M-character value; CONNECTIONS
// raw connections (well under the 256 a peer may open) GET it and stop reading after the head.
// What the server process then holds (ArrayBuffers and V8 heap, garbage collected) is compared
// with the 64 MiB all event streams together may queue. On the current code 40 such connections
// held ~800 MiB of ArrayBuffers and ~270 MiB of heap.
// Both directions: a client that reads gets the block whole.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import type { Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startServer } from '../../src/http/index.js'
import { DEFAULT_MAX_QUEUED_BYTES_TOTAL } from '../../src/http/sse-budget.js'
import { client, python } from '../http/helpers.js'
import { buffersAndHeapHeld, collect, settledPeak, stalledGet } from './fixtures/host-memory.js'

const TOKEN = 'attack16b-block-get-stalled-token-0123456789'
const CONNECTIONS = 24

test("clients that stop reading a block's answer do not make the server hold it once per connection", async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-block-get-home-'))
  const saved = process.env.VIS_HOME
  process.env.VIS_HOME = home
  let server: Awaited<ReturnType<typeof startServer>> | undefined
  const stalled: Socket[] = []
  try {
    server = await startServer({ home, python, port: 0, pool: { size: 0 }, extensions: false, token: TOKEN })
    const call = client(server.url, { authorization: `Bearer ${TOKEN}` })
    const s = (await call('POST', '/v1/sessions', {})).body
    const ran = await call('POST', `/v1/sessions/${s.id}/blocks`, {
      code: "print('\\x01' * 1_000_000)\n'ab' * 500_000",
    })
    assert.equal(ran.status, 200, ran.text.slice(0, 300))
    const path = `/v1/sessions/${s.id}/blocks/${ran.body.id}`
    // Allowed: a reading client gets the block whole.
    const whole = await call('GET', path)
    assert.equal(whole.status, 200)
    assert.equal(whole.body.stdout, `${'\x01'.repeat(1_000_000)}\n`)

    const port = Number(new URL(server.url).port)
    collect()
    const base = buffersAndHeapHeld()
    for (let i = 0; i < CONNECTIONS; i++) stalled.push(await stalledGet(port, path, TOKEN))
    // Wait until what the server holds stops growing.
    const peak = await settledPeak(base, buffersAndHeapHeld)
    const mib = Math.round(peak / 2 ** 20)
    assert.ok(
      peak < DEFAULT_MAX_QUEUED_BYTES_TOTAL,
      `${CONNECTIONS} connections that asked for one stored block and stopped reading made the server hold ` +
        `${mib} MiB (about ${Math.round(mib / CONNECTIONS)} MiB each), past the ` +
        `${DEFAULT_MAX_QUEUED_BYTES_TOTAL / 2 ** 20} MiB all event streams together may queue: a plain answer ` +
        'left unread is charged to no bound',
    )
  } finally {
    for (const sock of stalled) sock.destroy()
    await server?.close()
    if (saved === undefined) delete process.env.VIS_HOME
    else process.env.VIS_HOME = saved
    rmSync(home, { recursive: true, force: true })
  }
})
