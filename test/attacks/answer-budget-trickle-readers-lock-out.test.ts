// ATTACK (surface 1, "a reader that trickles counts as draining forever"): since the seventeenth
// pass an answer whose socket took a piece in the last 10 s (`DRAINING_WINDOW_MS`) is "draining":
// for the server's bound only stalled holders are closed, then the draining ones of a session
// holding MORE than the asking one would; otherwise the new answer is refused (head sent, then
// closed). SECURITY.md: "a session's readers keep its share, not the server". But "draining" asked
// only that one 256 KiB piece moved in 10 s (~26 KB/s), and the answer pins its buffer meanwhile
// (the whole until half of it went, then the rest). So connections of other sessions, each well
// within its session's share, that read a little every second hold most of the server's budget
// for as long as they like (minutes per answer, then ask again), and every other session's large
// answer is refused: its head is sent and its connection closed.
// Attachments are now sent from their file a piece at a time (they pin 256 KiB), so the pressure
// is the largest answer a route builds in memory: a block GET, ~7 MB of JSON (1M escaped control
// characters and a 1M-character value); the kernel takes ~3.7 MB of it at once, and each trickling
// reader then pins the ~3.3 MB rest. Against the default 64 MiB that is about 19 attacker sessions
// (each must hold no more than V's one answer asks for); the server here is given 17 MiB (9 MiB a
// session), the same rule at about a quarter of the size: four attacker sessions, one trickling reader
// each (32 KiB a second: a piece every ~8 s), hold ~12.7 of the 17 MiB, and V's 7 MB answer does not fit.
// Allowed direction first: V's client gets its block whole. Then the attacker's readers trickle
// past the draining window; V's client asks again and must get every byte.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startServer } from '../../src/http/index.js'
import { DRAINING_WINDOW_MS, SseBudget } from '../../src/http/sse-budget.js'
import { client, python } from '../http/helpers.js'
import { LARGE_ANSWER_BLOCK, readWhole, trickleReader, until } from './fixtures/host-memory.js'

const TOKEN = 'attack18b-trickle-lock-out-0123456789'
const MIB = 2 ** 20
const ATTACKERS = 4

test('trickling readers of other sessions do not lock a session out of its answer', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack18b-trickle-home-'))
  const saved = process.env.VIS_HOME
  process.env.VIS_HOME = home
  const budget = new SseBudget(17 * MIB, 9 * MIB)
  let server: Awaited<ReturnType<typeof startServer>> | undefined
  const readers: Array<ReturnType<typeof trickleReader>> = []
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
    const call = client(server.url, { authorization: `Bearer ${TOKEN}` })
    const port = Number(new URL(server.url).port)
    const largeBlock = async () => {
      const s = (await call('POST', '/v1/sessions', {})).body
      const ran = await call('POST', `/v1/sessions/${s.id}/blocks`, { code: LARGE_ANSWER_BLOCK })
      assert.equal(ran.status, 200, ran.text.slice(0, 300))
      return `/v1/sessions/${s.id}/blocks/${ran.body.id}`
    }
    const victimPath = await largeBlock()
    const attackPaths: string[] = []
    for (let i = 0; i < ATTACKERS; i++) attackPaths.push(await largeBlock())

    // Allowed: with nobody else holding anything, V's client gets its block whole.
    const before = await readWhole(port, victimPath, TOKEN)
    assert.match(before.head, /^HTTP\/1\.1 200 /)
    assert.equal(before.body, before.length, 'V read alone')

    // The attack: one trickling reader per attacker session (64 KiB a second each).
    const started = Date.now()
    for (const path of attackPaths) {
      const r = trickleReader(port, path, TOKEN, 32 * 1024, 1000)
      readers.push(r)
      await until('the trickling reader to get its head', () => r.state.head !== '' || r.state.closed)
      assert.match(r.state.head, /^HTTP\/1\.1 200 /)
    }
    await until(
      () =>
        `the trickling readers to hold most of the budget past the draining window (${budget.queuedBytes}; ${readers.map((r) => `${r.state.read}${r.state.closed ? ' closed' : ''}`).join(', ')})`,
      () =>
        Date.now() - started > DRAINING_WINDOW_MS * 1.5 &&
        readers.every((r) => r.state.read > 0 && !r.state.closed) &&
        budget.queuedBytes + before.length > budget.maxBytes,
    )
    const heldBy = budget.queuedBytes
    const readSoFar = readers.map((r) => r.state.read)
    const after = await readWhole(port, victimPath, TOKEN)
    assert.match(after.head, /^HTTP\/1\.1 200 /)
    assert.ok(
      after.body >= after.length,
      `session V's client got ${after.body} of its ${after.length} bytes: ${ATTACKERS} connections of ${ATTACKERS} other ` +
        `sessions, each reading 32 KiB a second (they had read ${readSoFar.join(', ')} bytes in ` +
        `${Math.round((Date.now() - started) / 1000)} s), counted as "draining" past the ${DRAINING_WINDOW_MS} ms window and ` +
        `held ${(heldBy / MIB).toFixed(1)} MiB of the server's ${budget.maxBytes / MIB} MiB, each within its session's share, ` +
        "so V's answer did not fit and was cut off after its head",
    )
  } finally {
    for (const r of readers) r.stop()
    await server?.close()
    if (saved === undefined) delete process.env.VIS_HOME
    else process.env.VIS_HOME = saved
    rmSync(home, { recursive: true, force: true })
  }
})
