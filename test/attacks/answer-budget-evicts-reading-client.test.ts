// ATTACK (surface 1, "an innocent client evicted by an attacker's load"): SECURITY.md (Slow and
// hostile clients) says every answer's unsent bytes are charged to one budget, connections holding
// the most closed first, and "Readers that keep up get every byte" / "a reading client gets the
// block whole". But an answer is charged WHOLE from the moment it is written until the socket has
// taken its last byte (the write's callback, or 'finish'): a client that is reading, just on a slow
// link, holds its whole answer for as long as the download lasts, exactly as a client that stopped
// reading does. Eviction picks the connection holding the most, the oldest on a tie: the honest
// reader, whose download started first, is the oldest holder of the biggest charge. So a few
// stalled requests of the same block (four are enough for the 32 MiB a session's group may hold)
// close the connection of the client that is still reading.
// Here: a block leaves a 30 MiB file in its outbox (an attachment within the 32 MiB a file may
// hold). The honest client GETs it over a raw socket and reads its first MiB (a slow link: the
// kernel's buffers are full when the attacker comes); the attacker then opens STALLED connections
// that ask for the same attachment and read only the head; the honest client reads on. On the
// current code its connection is closed part way through (it gets ~8 of 30 MiB): the first stalled
// request already passes the session's 32 MiB and evicts it.
// Both directions: the stalled connections may be closed, the reading one must get every byte.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import type { Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startServer } from '../../src/http/index.js'
import { client, python } from '../http/helpers.js'
import { slowReader, stalledGet } from './fixtures/host-memory.js'

const TOKEN = 'attack17b-evicts-reading-client-0123456789'
const STALLED = 6

test('a client still reading a large answer is not closed to make room for clients that stopped reading', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack17b-evict-home-'))
  const saved = process.env.VIS_HOME
  process.env.VIS_HOME = home
  let server: Awaited<ReturnType<typeof startServer>> | undefined
  const sockets: Socket[] = []
  try {
    server = await startServer({ home, python, port: 0, pool: { size: 0 }, extensions: false, token: TOKEN })
    const call = client(server.url, { authorization: `Bearer ${TOKEN}` })
    const s = (await call('POST', '/v1/sessions', {})).body
    const ran = await call('POST', `/v1/sessions/${s.id}/blocks`, {
      code: 'import os\nopen(os.path.join(VIS_OUTBOX, "big.bin"), "wb").write(os.urandom(30 * 2**20))\nNone',
    })
    assert.equal(ran.status, 200, ran.text.slice(0, 300))
    const att = ran.body.attachments?.[0]
    assert.equal(att?.size ?? 30 * 2 ** 20, 30 * 2 ** 20, JSON.stringify(ran.body.attachments))
    const path = `/v1/sessions/${s.id}/attachments/${att.id}`
    const port = Number(new URL(server.url).port)

    // The honest client: reads the head and its first MiB, then its link is slow.
    const reading = slowReader(port, path, TOKEN, 2 ** 20)
    const honest = reading.sock
    sockets.push(honest)
    await reading.reachedFirst
    assert.match(reading.state.head, /^HTTP\/1\.1 200 /)

    // The attacker: connections that ask for the same block and read only the head.
    for (let i = 0; i < STALLED; i++) sockets.push(await stalledGet(port, path, TOKEN))

    // The honest client reads on, to the end of its answer or until its connection closes.
    honest.resume()
    await reading.ended
    const { body, length } = reading.state
    assert.ok(
      body >= length,
      `the client that was reading a 30 MiB attachment got ${body} of its ${length} bytes: its connection was closed ` +
        `once ${STALLED} connections that stopped reading asked for the same attachment (it held its whole answer ` +
        'while reading, so it was the oldest holder of the most bytes and closed first)',
    )
  } finally {
    for (const sock of sockets) sock.destroy()
    await server?.close()
    if (saved === undefined) delete process.env.VIS_HOME
    else process.env.VIS_HOME = saved
    rmSync(home, { recursive: true, force: true })
  }
})
