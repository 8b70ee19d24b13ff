// The lists the HTTP API builds whole are bounded in bytes and page (eighteenth outsider pass,
// test/attacks/turns-list-unbounded-response.test.ts and sessions-list-policy-unbounded-response.test.ts):
// ordinary lists still answer whole, a long one pages on with its cursor, and a policy past its
// bound is refused with its own code.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { MAX_RULE_PATHS } from '../../src/contracts/network-policy.js'
import { startServer } from '../../src/http/index.js'
import { SESSION_PAGE_BYTES } from '../../src/persistence/json-bytes.js'
import { ProviderDouble } from '../agent/double.js'
import { python } from '../agent/harness.js'
import { client } from './helpers.js'

async function withServer(
  name: string,
  fn: (call: ReturnType<typeof client>, double: ProviderDouble) => Promise<void>,
): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), `vis-list-pages-${name}-`))
  const saved = process.env.VIS_HOME
  process.env.VIS_HOME = home
  const double = await new ProviderDouble().start()
  writeFileSync(
    join(home, 'agent.json'),
    JSON.stringify({
      model: 'openai/double-model',
      providers: { openai: { baseURL: double.openaiURL, apiKey: 'sk-list-pages' } },
    }),
  )
  let server: Awaited<ReturnType<typeof startServer>> | undefined
  try {
    // Bodies up to 4 MiB: the policy's own bound is what refuses (an operator may raise the body's).
    server = await startServer({
      home,
      python,
      port: 0,
      pool: { size: 0 },
      extensions: false,
      maxBodyBytes: 4 * 2 ** 20,
    })
    await fn(client(server.url), double)
  } finally {
    await server?.close()
    await double.close()
    if (saved === undefined) delete process.env.VIS_HOME
    else process.env.VIS_HOME = saved
    rmSync(home, { recursive: true, force: true })
  }
}

test('a policy past its bounds is refused: too many paths in a rule, or past 1 MiB in all', async () => {
  await withServer('policy', async (call) => {
    const glob = (i: number, n: number) => `${`/${i}/`.padEnd(n - 1, 'a')}*`
    const many = Array.from({ length: MAX_RULE_PATHS + 1 }, (_, i) => glob(i, 10))
    const r1 = await call('POST', '/v1/sessions', {
      network: { enabled: true, allow: [{ host: 'example.com', paths: many }] },
    })
    assert.equal(r1.status, 400, r1.text.slice(0, 300))
    assert.equal(r1.body.error.code, 'http.invalid-body')

    // Each rule within its bound, the policy past 1 MiB: four rules of 1000 paths of 300 characters.
    const rules = Array.from({ length: 4 }, (_, k) => ({
      host: `h${k}.example.com`,
      paths: Array.from({ length: 1000 }, (_, i) => glob(i, 300)),
    }))
    const r2 = await call('POST', '/v1/sessions', { network: { enabled: true, allow: rules } })
    assert.equal(r2.status, 400, r2.text.slice(0, 300))
    assert.equal(r2.body.error.code, 'policy.too-large')

    // Within both: made, and listed whole.
    const r3 = await call('POST', '/v1/sessions', { network: { enabled: true, allow: rules.slice(0, 3) } })
    assert.equal(r3.status, 201, r3.text.slice(0, 300))
    const list = await call('GET', '/v1/sessions')
    assert.equal(list.status, 200)
    assert.deepEqual(
      list.body.sessions.map((s: { id: string }) => s.id),
      [r3.body.id],
    )
    assert.equal(list.body.next_offset, undefined)
  })
})

test('the session list pages on in bytes with next_offset, every session listed once', async () => {
  await withServer('sessions', async (call) => {
    // ~0.9 MiB of policy each: four fit a 4 MiB page, not six.
    const paths = Array.from({ length: 3000 }, (_, i) => `${`/${i}/`.padEnd(299, 'a')}*`)
    const made: string[] = []
    for (let i = 0; i < 6; i++) {
      const r = await call('POST', '/v1/sessions', {
        network: { enabled: true, allow: [{ host: 'example.com', paths }] },
      })
      assert.equal(r.status, 201, r.text.slice(0, 300))
      made.push(r.body.id)
    }
    const seen: string[] = []
    let offset: number | undefined = 0
    let pages = 0
    while (offset !== undefined) {
      const r = await call('GET', `/v1/sessions?offset=${offset}`)
      assert.equal(r.status, 200)
      assert.ok(Buffer.byteLength(r.text) <= SESSION_PAGE_BYTES + 64 * 1024, `page of ${r.text.length} bytes`)
      seen.push(...r.body.sessions.map((s: { id: string }) => s.id))
      offset = r.body.next_offset
      pages++
    }
    assert.ok(pages >= 2, `the six sessions came in ${pages} page(s)`)
    assert.deepEqual(seen, [...made].reverse())
  })
})

test('the turn list clips long texts (truncated), pages with before/next_before, and a turn reads whole', async () => {
  await withServer('turns', async (call, double) => {
    const s = (await call('POST', '/v1/sessions', {})).body
    double.script([], { text: 'x'.repeat(100_000), usage: { input: 1, output: 1 } })
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      const t = await call('POST', `/v1/sessions/${s.id}/turns`, { prompt: `turn ${i}` })
      assert.equal(t.status, 200, t.text.slice(0, 300))
      ids.push(t.body.id)
    }
    const first = await call('GET', `/v1/sessions/${s.id}/turns?limit=2`)
    assert.equal(first.status, 200)
    assert.deepEqual(
      first.body.turns.map((t: { id: string }) => t.id),
      ids.slice(1),
    )
    assert.equal(first.body.turns_before, 1)
    for (const t of first.body.turns) {
      assert.equal(t.truncated, true)
      assert.equal(t.answer.length, 65_536)
    }
    const rest = await call('GET', `/v1/sessions/${s.id}/turns?before=${first.body.next_before}`)
    assert.deepEqual(
      rest.body.turns.map((t: { id: string }) => t.id),
      ids.slice(0, 1),
    )
    assert.equal(rest.body.turns_before, 0)
    assert.equal(rest.body.next_before, null)
    assert.ok(rest.body.usage.input >= 3)

    // The whole turn on its own route.
    const whole = await call('GET', `/v1/sessions/${s.id}/turns/${ids[0]}`)
    assert.equal(whole.body.answer.length, 100_000)
    assert.equal(whole.body.truncated, undefined)
  })
})
