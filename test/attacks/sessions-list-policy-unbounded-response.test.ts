// ATTACK (surface 3, "lists of sessions still unbounded"): `GET /v1/sessions` (the page's session
// list; `?limit=` up to 1000, default 100) lists each session with its whole policy, and bounds
// only how many. The session view is bounded in BYTES (SECURITY.md: 4 MiB of JSON a page) because
// an answer is built whole in memory and then charged to the answer budget; the list is not. A
// session's policy holds its network rules, and a rule's `paths` (and `methods`) is an array with
// no bound on its length (src/contracts/network-policy.ts: `MAX_NETWORK_ENTRIES` bounds the allow
// and deny lists, not a rule's paths), so one POST of 1 MiB makes a session whose list entry is
// 1 MiB. 33 such sessions make the default list ~33 MiB, built whole, past a session's share of
// the budget: it is cut after its head for EVERY client, whichever sessions they care about (the
// page cannot list sessions), and `?limit=1000` would build up to a gigabyte.
// Here: SESSIONS sessions, each with one allow rule of 3300 path globs of 300 characters. Allowed
// direction first: the list answers whole with one of them. Then the default list must stay
// bounded and arrive whole.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { get } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startServer } from '../../src/http/index.js'
import { SESSION_PAGE_BYTES } from '../../src/persistence/json-bytes.js'
import { python } from '../http/helpers.js'

const SESSIONS = 36
const paths = Array.from({ length: 3300 }, (_, i) => `${`/${i}/`.padEnd(299, 'a')}*`)

// The list, read as it comes: its head's length and what arrived before the connection ended.
function list(url: string): Promise<{ status: number; length: number; bytes: number; cut: boolean }> {
  return new Promise((resolve) => {
    const out = { status: 0, length: -1, bytes: 0, cut: false }
    const req = get(url, (res) => {
      out.status = res.statusCode ?? 0
      out.length = Number(res.headers['content-length'] ?? -1)
      res.on('data', (d: Buffer) => {
        out.bytes += d.length
      })
      res.on('aborted', () => {
        out.cut = true
      })
      res.on('error', () => {
        out.cut = true
        resolve(out)
      })
      res.on('end', () => resolve(out))
      res.on('close', () => resolve(out))
    })
    req.on('error', () => {
      out.cut = true
      resolve(out)
    })
  })
}

test('the session list is bounded in bytes, whatever policies the sessions hold', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack18b-sessions-list-home-'))
  const saved = process.env.VIS_HOME
  process.env.VIS_HOME = home
  let server: Awaited<ReturnType<typeof startServer>> | undefined
  try {
    server = await startServer({ home, python, port: 0, pool: { size: 0 }, extensions: false })
    const body = JSON.stringify({ network: { enabled: true, allow: [{ host: 'example.com', paths }] } })
    const create = async () => {
      const r = await fetch(`${server!.url}/v1/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      })
      assert.equal(r.status, 201, (await r.text()).slice(0, 300))
      await r.arrayBuffer().catch(() => undefined)
    }
    await create()
    // Allowed: the list answers whole.
    const one = await list(`${server.url}/v1/sessions`)
    assert.equal(one.status, 200)
    assert.ok(!one.cut && one.bytes === one.length, 'the list of one session arrives whole')

    for (let i = 1; i < SESSIONS; i++) await create()
    const got = await list(`${server.url}/v1/sessions`)
    const mib = (n: number) => (n / 2 ** 20).toFixed(1)
    assert.ok(
      got.status === 200 && !got.cut && got.bytes === got.length && got.length <= 2 * SESSION_PAGE_BYTES,
      `GET /v1/sessions (default limit) with ${SESSIONS} sessions of ${mib(Buffer.byteLength(body))} MiB of network ` +
        `rule paths each: status ${got.status}, ${mib(got.length)} MiB announced, ${mib(got.bytes)} MiB received` +
        `${got.cut ? ', the connection cut (past the budget: no client can list sessions)' : ''}; a rule's paths ` +
        `have no bound and the list is bounded by count only, while the session view keeps to ` +
        `${SESSION_PAGE_BYTES / 2 ** 20} MiB`,
    )
  } finally {
    await server?.close()
    if (saved === undefined) delete process.env.VIS_HOME
    else process.env.VIS_HOME = saved
    rmSync(home, { recursive: true, force: true })
  }
})
