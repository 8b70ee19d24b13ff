// A real browser (Debian's Chromium) against a real server: pages from other origins try what a
// malicious site would (no-cors fetch, form posts, a preflighted fetch, DNS rebinding) and none
// creates a session or runs code; the server's own page and a configured CORS origin work.
// The server runs without a token, as a library user may start it: the guards alone must hold.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { createEngine, type Engine } from '../../src/engine/engine.js'
import { launchChromium, serveRecorded, staticSite } from './browser-helpers.js'
import { python, tempHome, waitFor } from './helpers.js'

const { home, root } = tempHome('http-browser')
const MARKER = join(root, 'pwned')

// The attacker's page: every way a page may send a POST without asking the server first, then
// one that does ask (a JSON fetch, preflighted). It reports what it could read in the title.
function attackPage(target: string, sessionId: string): string {
  const code = `open(${JSON.stringify(MARKER)}, "w").write("pwned")`
  const create = JSON.stringify({ roots: ['/tmp'], network: { enabled: true } })
  const run = JSON.stringify({ code })
  // enctype=text/plain sends `name=value`: the name carries the JSON, the value closes it.
  const formName = run.slice(0, -2)
  const formValue = `${run.slice(-2)}`
  return `<!doctype html><meta charset=utf-8><title>attack</title>
<iframe name=sink1></iframe><iframe name=sink2></iframe>
<form id=f1 method=POST target=sink1 enctype="text/plain" action="${target}/v1/sessions/${sessionId}/blocks">
  <input name='${formName.replace(/'/g, '&#39;')}' value='${formValue.replace(/'/g, '&#39;')}'>
</form>
<form id=f2 method=POST target=sink2 action="${target}/v1/sessions"><input name=roots value=/></form>
<script>
const T = ${JSON.stringify(target)}, S = ${JSON.stringify(sessionId)}
const report = []
const loaded = (name) => new Promise((r) => document.querySelector('iframe[name=' + name + ']').addEventListener('load', r, { once: true }))
async function attempt(label, f) { try { report.push(label + ':' + (await f())) } catch (e) { report.push(label + ':blocked') } }
;(async () => {
  await attempt('nocors-create', () => fetch(T + '/v1/sessions', { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: ${JSON.stringify(create)} }).then((r) => r.type))
  await attempt('nocors-run', () => fetch(T + '/v1/sessions/' + S + '/blocks', { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: ${JSON.stringify(run)} }).then((r) => r.type))
  await attempt('cors-json', () => fetch(T + '/v1/sessions/' + S + '/blocks', { method: 'POST', headers: { 'content-type': 'application/json' }, body: ${JSON.stringify(run)} }).then((r) => r.status))
  await attempt('cors-read', () => fetch(T + '/v1/sessions').then((r) => r.text()))
  const l1 = loaded('sink1'); document.getElementById('f1').submit(); await l1
  const l2 = loaded('sink2'); document.getElementById('f2').submit(); await l2
  document.title = 'done ' + report.join(' ')
})()
</script>`
}

describe('in a real browser', () => {
  let engine: Engine
  let victim: Awaited<ReturnType<typeof serveRecorded>>
  let attacker: Awaited<ReturnType<typeof staticSite>>
  let trusted: Awaited<ReturnType<typeof staticSite>>
  let browser: Browser
  let sessionId: string
  const trustedPage = '<!doctype html><title>trusted</title>'

  before(async () => {
    engine = await createEngine({ home, python, pool: { size: 1 } })
    // The trusted UI's origin is known before its server starts only by port, so start it first.
    trusted = await staticSite('127.0.0.3', { '/': trustedPage })
    victim = await serveRecorded(engine, { bindHost: '127.0.0.1', corsOrigins: [trusted.origin] })
    sessionId = (await engine.createSession({ roots: [root], title: 'victim' })).id
    attacker = await staticSite('127.0.0.2', { '/': attackPage(victim.url, sessionId) })
    browser = await launchChromium([`--host-resolver-rules=MAP evil.test 127.0.0.1`])
  })
  after(async () => {
    await browser?.close()
    await attacker?.close()
    await trusted?.close()
    await victim?.close()
    await engine?.close()
  })

  const blocksRun = () => engine.getSession(sessionId).blocks.length
  const sessionCount = () => engine.listSessions({ state: 'all' }).length

  test('a page from another origin neither creates a session nor runs code', async () => {
    const page = await browser.newPage()
    await page.goto(`${attacker.origin}/`)
    await page.waitForFunction("document.title.startsWith('done')", undefined, { timeout: 60_000 })
    const report = (await page.title()).split(' ').slice(1)
    await page.close()
    // Opaque answers to no-cors sends; the preflighted fetch and the read were stopped by the browser.
    assert.deepEqual(report, [
      'nocors-create:opaque',
      'nocors-run:opaque',
      'cors-json:blocked',
      'cors-read:blocked',
    ])

    // Server side: every attempt arrived, and every one was refused for its Origin.
    const fromAttacker = victim.seen.filter((s) => s.origin === attacker.origin)
    const kinds = fromAttacker.map((s) => `${s.method} ${s.path.replace(sessionId, '{id}')}`)
    for (const k of [
      'POST /v1/sessions',
      'POST /v1/sessions/{id}/blocks',
      'OPTIONS /v1/sessions/{id}/blocks',
    ]) {
      assert.ok(kinds.includes(k), `${k} reached the server (got ${JSON.stringify(kinds)})`)
    }
    assert.ok(
      kinds.filter((k) => k === 'POST /v1/sessions/{id}/blocks').length >= 2,
      'the fetch and the form post',
    )
    assert.ok(kinds.filter((k) => k === 'POST /v1/sessions').length >= 2, 'the fetch and the form post')
    for (const s of fromAttacker) assert.equal(s.status, 403, `${s.method} ${s.path}`)
    // The block route's attempts were refused by the fast routes' guards, not only hono's.
    const blockPosts = fromAttacker.filter((s) => s.method === 'POST' && s.path.endsWith('/blocks'))
    assert.ok(blockPosts.length >= 2 && blockPosts.every((s) => s.fast), JSON.stringify(blockPosts))
    // The read without an Origin header (a simple GET may carry one or not) never got a CORS grant either way.
    assert.equal(sessionCount(), 1, 'no session was created')
    assert.equal(blocksRun(), 0, 'no block ran')
    assert.equal(existsSync(MARKER), false, 'the code never ran')
  })

  test('DNS rebinding: a page at evil.test resolving to 127.0.0.1 is refused for its Host', async () => {
    const page = await browser.newPage()
    const res = await page.goto(`http://evil.test:${victim.port}/v1/sessions`)
    assert.equal(res?.status(), 421, 'even reading is refused')
    // Now "same origin" with the server, the page tries the API as its own.
    const tried = await page.evaluate(
      async ([body, sid]) => {
        const create = await fetch('/v1/sessions', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        })
        const list = await fetch('/v1/sessions')
        const run = await fetch(`/v1/sessions/${sid}/blocks`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ code: 'x = 1' }),
        })
        return { create: create.status, list: list.status, listed: await list.text(), run: run.status }
      },
      [JSON.stringify({ roots: [root] }), sessionId] as const,
    )
    await page.close()
    assert.equal(tried.create, 421)
    assert.equal(tried.list, 421)
    assert.equal(tried.run, 421)
    assert.ok(!tried.listed.includes(sessionId), 'the session list did not leak')
    const rebound = victim.seen.filter((s) => s.host.startsWith('evil.test'))
    assert.ok(
      rebound.some((s) => s.method === 'POST'),
      'the POST reached the server',
    )
    for (const s of rebound) assert.equal(s.status, 421, `${s.method} ${s.path}`)
    // (Chromium retries a request answered 421 once, on a new connection.)
    const reboundRun = rebound.filter((s) => s.path.endsWith('/blocks'))
    assert.ok(
      reboundRun.length >= 1 && reboundRun.every((s) => s.fast),
      `the fast routes refused the block for its Host: ${JSON.stringify(reboundRun)}`,
    )
    assert.equal(sessionCount(), 1)
    assert.equal(blocksRun(), 0)
  })

  test("the server's own page and a configured CORS origin may use the API", async () => {
    const page = await browser.newPage()
    await page.goto(`${victim.url}/v1/health`)
    const own = await page.evaluate(async (sid) => {
      const r = await fetch('/v1/sessions/' + sid + '/blocks', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code: 'print("from my own page")' }),
      })
      return { status: r.status, body: (await r.json()) as { stdout: string } }
    }, sessionId)
    assert.equal(own.status, 200)
    assert.equal(own.body.stdout, 'from my own page\n')

    await page.goto(`${trusted.origin}/`)
    const cors = await page.evaluate(
      async ([target, sid]) => {
        const r = await fetch(target + '/v1/sessions/' + sid + '/blocks', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': 'trusted-1' },
          body: JSON.stringify({ code: '6 * 7' }),
        })
        const body = (await r.json()) as { result: unknown }
        return { status: r.status, result: body.result, location: r.headers.get('location') }
      },
      [victim.url, sessionId] as const,
    )
    await page.close()
    assert.equal(cors.status, 200)
    assert.equal(cors.result, 42)
    assert.match(cors.location ?? '', /^\/v1\/sessions\/.+\/blocks\/blk_/, 'exposed to the page')
    const preflight = victim.seen.find((s) => s.method === 'OPTIONS' && s.origin === trusted.origin)
    assert.equal(preflight?.status, 204)
    await waitFor(() => blocksRun() === 2, 10_000, 'both blocks to be stored')
    const ran = victim.seen.filter(
      (s) => s.method === 'POST' && s.path.endsWith('/blocks') && s.status === 200,
    )
    assert.equal(ran.length, 2)
    assert.ok(
      ran.every((s) => s.fast),
      'both ran through the fast routes',
    )
  })
})
