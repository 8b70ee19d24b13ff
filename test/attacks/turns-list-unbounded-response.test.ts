// ATTACK (surface 3, "lists of turns still unbounded"): the session view is bounded in bytes as
// sent (SECURITY.md, session view: "4 MiB of fields and attachments as JSON a page", blocks read
// newest first and cut, the rest by `?before=`), because an answer built whole in memory and
// held until the client reads it is the server's memory. `GET /v1/sessions/{id}/turns` has no such
// bound: it lists EVERY turn of the session, oldest first, each with its prompt, its answer, every
// iteration's model text and tool calls (src/agent/host.ts `listTurns`, records.ts `turn`), no
// limit, no page, no cut. The model's text is model-written: a text of U+0001 characters is six
// bytes each in the JSON answer.
// Here: a provider double answers each turn with 1 M characters of U+0001 (one iteration, no tool
// call): SIX turns of one session. Allowed direction: each turn is readable on its own route, and
// the list answers. The list must stay within the session view's page bound (or page); on the
// current code it answers ~72 MB in one body.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { get } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startServer } from '../../src/http/index.js'
import { SESSION_PAGE_BYTES } from '../../src/persistence/json-bytes.js'
import { ProviderDouble } from '../agent/double.js'
import { python } from '../agent/harness.js'
import { client } from '../http/helpers.js'

const TURNS = 6
const CHARS = 1_000_000

test("a session's turn list is bounded like its view", async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack18b-turns-home-'))
  const saved = process.env.VIS_HOME
  process.env.VIS_HOME = home
  const double = await new ProviderDouble().start()
  writeFileSync(
    join(home, 'agent.json'),
    JSON.stringify({
      model: 'openai/double-model',
      providers: { openai: { baseURL: double.openaiURL, apiKey: 'sk-attack18b' } },
    }),
  )
  let server: Awaited<ReturnType<typeof startServer>> | undefined
  try {
    server = await startServer({ home, python, port: 0, pool: { size: 0 }, extensions: false })
    const call = client(server.url)
    const s = (await call('POST', '/v1/sessions', {})).body
    double.script([], { text: '\u0001'.repeat(CHARS), textPiece: 250_000, usage: { input: 10, output: 10 } })
    let last = ''
    for (let i = 0; i < TURNS; i++) {
      const t = await call('POST', `/v1/sessions/${s.id}/turns`, { prompt: `turn ${i}` })
      assert.equal(t.status, 200, t.text.slice(0, 300))
      last = t.body.id
    }
    // Allowed: one turn reads on its own route.
    const one = await fetch(`${server.url}/v1/sessions/${s.id}/turns/${last}`)
    assert.equal(one.status, 200)
    await one.arrayBuffer()

    // The list, read as it comes: its head's length and what arrived before the connection ended.
    const got = await new Promise<{ status: number; length: number; bytes: number; cut: boolean }>(
      (resolve) => {
        const out = { status: 0, length: -1, bytes: 0, cut: false }
        const req = get(`${server!.url}/v1/sessions/${s.id}/turns`, (res) => {
          out.status = res.statusCode ?? 0
          out.length = Number(res.headers['content-length'] ?? -1)
          res.on('data', (d: Buffer) => {
            out.bytes += d.length
          })
          res.on('end', () => resolve(out))
          res.on('aborted', () => {
            out.cut = true
          })
          res.on('error', () => {
            out.cut = true
            resolve(out)
          })
          res.on('close', () => resolve(out))
        })
        req.on('error', () => {
          out.cut = true
          resolve(out)
        })
      },
    )
    assert.equal(got.status, 200)
    const mib = (n: number) => (n / 2 ** 20).toFixed(1)
    assert.ok(
      !got.cut && got.bytes === got.length && got.length <= 2 * SESSION_PAGE_BYTES,
      `GET /v1/sessions/{id}/turns for ${TURNS} turns (each model text ${CHARS} U+0001 characters, six bytes each ` +
        `as JSON) was built whole: ${mib(got.length)} MiB announced, ${mib(got.bytes)} MiB received` +
        `${got.cut ? ', the connection cut (the answer is past the budget: the list can never be read)' : ''}; ` +
        `every turn, its answer and its iterations' text, no limit, no page, while the session view keeps to ` +
        `${SESSION_PAGE_BYTES / 2 ** 20} MiB`,
    )
  } finally {
    await server?.close()
    await double.close()
    if (saved === undefined) delete process.env.VIS_HOME
    else process.env.VIS_HOME = saved
    rmSync(home, { recursive: true, force: true })
  }
})
