// ATTACK (surface 1, "answers not charged" to their session): an answer's unsent bytes are charged
// to the group of the session its URL names (src/http/answer-budget.ts `answerGroup`: the regex
// `^/v1/sessions/([^/?#]+)` on `req.url`), so that one session's answers and streams share its
// 32 MiB and, past the server's 64 MiB, "the session holding the most gives up its stream
// furthest behind first: many stalled streams of one session ... must not push out another
// session's single reader" (sse-budget.ts; SECURITY.md, Slow and hostile clients). But HTTP/1.1
// allows the request target in absolute form (`GET http://127.0.0.1:PORT/v1/sessions/ID/... `,
// RFC 9112 §3.2.2), which the hono adapter routes like the path: `req.url` then starts with
// `http://`, the regex does not match, and every such answer is a group of its own (`answer:N`).
// The attacker's session then holds as much as the whole server budget, spread over groups each
// lighter than another session's one reader, which is the session "holding the most" and is
// closed first.
// Here: session V has a client reading its 30 MiB attachment (it read its first MiB; a slow link).
// Session A has a 12 MiB attachment; the attacker opens stalled connections that ask for it and
// read only the head. With ordinary paths (allowed direction, first) A's stalled answers are charged to
// A (32 MiB) and V's reader gets every byte; with the same requests in absolute form V's reader is
// closed part way through.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import type { Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startServer } from '../../src/http/index.js'
import { client, python } from '../http/helpers.js'
import { slowReader, stalledGet } from './fixtures/host-memory.js'

const TOKEN = 'attack17b-absolute-url-group-0123456789'
const STALLED = 8

test("absolute-form request targets do not move a session's answers out of its share of the budget", async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack17b-absurl-home-'))
  const saved = process.env.VIS_HOME
  process.env.VIS_HOME = home
  let server: Awaited<ReturnType<typeof startServer>> | undefined
  const sockets: Socket[] = []
  try {
    server = await startServer({ home, python, port: 0, pool: { size: 0 }, extensions: false, token: TOKEN })
    const call = client(server.url, { authorization: `Bearer ${TOKEN}` })
    const port = Number(new URL(server.url).port)
    // A block leaves a file of `mib` MiB in its outbox: the attachment's path.
    const attachment = async (sessionId: string, mib: number) => {
      const ran = await call('POST', `/v1/sessions/${sessionId}/blocks`, {
        code: `import os\nopen(os.path.join(VIS_OUTBOX, "f.bin"), "wb").write(os.urandom(${mib} * 2**20))\nNone`,
      })
      assert.equal(ran.status, 200, ran.text.slice(0, 300))
      const att = ran.body.attachments?.[0]
      assert.ok(att?.id, JSON.stringify(ran.body).slice(0, 300))
      return `/v1/sessions/${sessionId}/attachments/${att.id}`
    }
    const v = (await call('POST', '/v1/sessions', {})).body
    const victimPath = await attachment(v.id, 30)
    const a = (await call('POST', '/v1/sessions', {})).body
    const attackPath = await attachment(a.id, 12)

    const round = async (target: string) => {
      const mine: Socket[] = []
      const reading = slowReader(port, victimPath, TOKEN, 2 ** 20)
      const victim = reading.sock
      mine.push(victim)
      await reading.reachedFirst
      assert.match(reading.state.head, /^HTTP\/1\.1 200 /)
      for (let i = 0; i < STALLED; i++) mine.push(await stalledGet(port, target, TOKEN))
      victim.resume()
      await reading.ended
      sockets.push(...mine)
      const out = { ...reading.state }
      for (const s of mine) s.destroy()
      return out
    }

    // Allowed: the attacker's stalled answers, by path, are its own session's to lose.
    const byPath = await round(attackPath)
    assert.ok(
      byPath.body >= byPath.length,
      `by path: the reading client of another session got ${byPath.body} of ${byPath.length} bytes`,
    )
    // The attack: the same requests with the target in absolute form.
    const absolute = await round(`http://127.0.0.1:${port}${attackPath}`)
    assert.ok(
      absolute.body >= absolute.length,
      `the reading client of session V got ${absolute.body} of its ${absolute.length} bytes: ${STALLED} stalled ` +
        `requests of session A's attachment written as absolute URLs (GET http://127.0.0.1:${port}/v1/sessions/A/...) ` +
        'were each charged to a group of their own, not to A, so V was the heaviest "session" and its reader was closed',
    )
  } finally {
    for (const sock of sockets) sock.destroy()
    await server?.close()
    if (saved === undefined) delete process.env.VIS_HOME
    else process.env.VIS_HOME = saved
    rmSync(home, { recursive: true, force: true })
  }
})
