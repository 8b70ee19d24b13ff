// The session page's fixes (issue 36 §2), in Debian's Chromium behind the token as `vis serve`
// runs it: at 420 px the list goes above the session instead of squeezing its code; 1 MiB of
// output is clipped with "show all"; a cancelled block says cancelled; an error's whole chain is
// there, collapsed; /favicon.ico is served; the session list filters and pages past 200; a title
// or output with bidi controls cannot spoof what it says. No console errors, no failed requests.
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import type { VisServer } from '../../src/http/server.js'
import { launchChromium } from './browser-helpers.js'
import { type client, tempHome, testServer, waitFor } from './helpers.js'
import { screenshots, watchPage } from './page-watch.js'

const { home, root } = tempHome('http-page-fixes')
const TOKEN = 'page-fixes-token-0123456789abcdef'
const RLO = '\u202e'

describe('the session page, fixed', () => {
  let server: VisServer
  let browser: Browser
  let page: Page
  let watch: ReturnType<typeof watchPage>
  let call: ReturnType<typeof client>
  let sessionId: string

  before(async () => {
    ;({ server, call } = await testServer({ home, pool: { size: 1 }, token: TOKEN }))
    browser = await launchChromium()
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage()
    watch = watchPage(page)
  })
  after(async () => {
    await browser?.close()
    await server?.close()
  })

  const block = (id: string) => page.locator(`article[data-block="${id}"]`)
  const run = async (code: string) => {
    const r = await call('POST', `/v1/sessions/${sessionId}/blocks`, { code }, { prefer: 'respond-async' })
    assert.equal(r.status, 202, r.text)
    return r.body.id as string
  }

  test('a title with U+202E shows the control, isolated; /favicon.ico is served', async () => {
    const created = await call('POST', '/v1/sessions', { roots: [root], title: `invoice${RLO}fdp.exe` })
    assert.equal(created.status, 201, created.text)
    sessionId = created.body.id
    assert.equal((await page.goto(`${server.url}/?token=${TOKEN}`))?.status(), 200)
    const link = page.locator(`a[data-session="${sessionId}"]`)
    await link.click({ timeout: 30_000 })
    await page.locator('#session-meta').waitFor()
    // The attack: the override would make the title read "invoiceexe.pdf". The page shows the
    // control as a mark instead, so the text on screen is what the title really holds.
    const title = link.locator('bdi.title')
    assert.equal(await title.textContent(), 'invoice<U+202E>fdp.exe')
    assert.equal(await title.evaluate((el) => el.textContent?.includes('\u202e')), false)
    assert.equal(await page.locator('#session h2 bdi').textContent(), 'invoice<U+202E>fdp.exe')

    const icon = await page.evaluate(async () => {
      const r = await fetch('/favicon.ico')
      return [r.status, r.headers.get('content-type'), (await r.text()).slice(0, 4)]
    })
    assert.deepEqual(icon, [200, 'image/svg+xml', '<svg'])
    // Sandbox-made text too: output with an override shows it as a mark.
    const id = await run(`print("file: abc${RLO}txt.js")`)
    await page.locator(`article[data-block="${id}"][data-status="done"]`).waitFor({ timeout: 30_000 })
    assert.equal(await block(id).locator('pre.stdout').textContent(), 'file: abc<U+202E>txt.js\n')
    // Markup the sandbox prints is text too: no element, no script, no request for its image.
    const xss = await run(`print('<img src=/pwned onerror="document.title=1">')\n'<b>bold</b>'`)
    await page.locator(`article[data-block="${xss}"][data-status="done"]`).waitFor({ timeout: 30_000 })
    assert.equal(await block(xss).locator('img, b').count(), 0)
    assert.match((await block(xss).locator('pre.stdout').textContent()) ?? '', /^<img src=\/pwned/)
    assert.equal(await page.title(), 'vis sessions')
  })

  test('at 420 px the code gets the width; 1 MiB of output is clipped until "show all"', async () => {
    await page.setViewportSize({ width: 420, height: 900 })
    const id = await run("for i in range(10_500):\n    print('y' * 98, i % 10)")
    await page.locator(`article[data-block="${id}"][data-status="done"]`).waitFor({ timeout: 60_000 })
    const code = await block(id).locator('pre.code').boundingBox()
    assert.ok(code && code.width >= 380, `the code box is ${code?.width} px wide at 420 px`)
    const out = block(id).locator('pre.stdout')
    const clipped = await out.boundingBox()
    assert.ok(clipped && clipped.height < 1000, `the output box is ${clipped?.height} px high`)
    const showAll = block(id).locator('button.show-all')
    assert.equal(await showAll.isVisible(), true)
    assert.match((await showAll.textContent()) ?? '', /Show all \(1,0\d\d,\d\d\d characters\)/)
    await screenshots(page, 'fixes-clipped')
    await page.setViewportSize({ width: 420, height: 900 })
    await showAll.click()
    const full = await out.boundingBox()
    assert.ok(full && full.height > 100_000, `all of it shows: ${full?.height} px`)
    assert.equal(await showAll.isVisible(), false)
    await page.setViewportSize({ width: 1280, height: 900 })
  })

  test('a cancelled block wears "cancelled", not "failed"', async () => {
    const go = join(root, 'go-cancel')
    const first = await run(
      `import os, time\nwhile not os.path.exists(${JSON.stringify(go)}):\n    time.sleep(0.02)`,
    )
    await page.locator(`article[data-block="${first}"][data-status="running"]`).waitFor({ timeout: 30_000 })
    const queued = await run('never = 1')
    await page.locator(`article[data-block="${queued}"][data-status="queued"]`).waitFor({ timeout: 30_000 })
    await block(queued).locator('button.cancel').click()
    await page
      .locator(`article[data-block="${queued}"][data-status="cancelled"]`)
      .waitFor({ timeout: 30_000 })
    assert.equal(await block(queued).locator('.badge').textContent(), 'cancelled')
    writeFileSync(go, '')
    await page.locator(`article[data-block="${first}"][data-status="done"]`).waitFor({ timeout: 30_000 })
  })

  test("an error's whole chain is there, collapsed", async () => {
    const id = await run(
      [
        'def parse(s):',
        '    return int(s)',
        'def load():',
        '    try:',
        "        return parse('x')",
        '    except ValueError as e:',
        "        raise RuntimeError('config unreadable') from e",
        'load()',
      ].join('\n'),
    )
    const chain = block(id).locator('.error details.chain')
    await chain.waitFor({ state: 'attached', timeout: 30_000 })
    assert.equal(await block(id).getAttribute('data-status'), 'failed')
    assert.match(
      (await block(id).locator('.error pre.message').textContent()) ?? '',
      /^RuntimeError: config unreadable/,
    )
    assert.equal(await chain.evaluate((d) => (d as unknown as { open: boolean }).open), false, 'collapsed')
    assert.equal(await chain.locator('pre').isVisible(), false)
    await chain.locator('summary').click()
    const text = (await chain.locator('pre').textContent()) ?? ''
    assert.match(text, /this block, line 2, in parse\n {4}return int\(s\)\nValueError: invalid literal/)
    assert.match(text, /The above exception was the direct cause of the following exception/)
    assert.match(text, /this block, line 8\n {4}load\(\)\n {2}this block, line 7, in load/)
    assert.match(text, /RuntimeError: config unreadable$/)
    assert.doesNotMatch(text, /vis_guest/, "the guest runtime's own frames are left out")
  })

  test('the session list filters, and pages past 200', async () => {
    // Old sessions, as a long-running server accumulates them (straight into the store: 230
    // workers would only slow the test down).
    const store = server.engine.store
    for (let i = 0; i < 230; i++) {
      const s = store.sessions.create({ title: `old-${String(i).padStart(3, '0')}`, policy: { roots: [] } })
      store.sessions.close(s.id)
    }
    const items = page.locator('#sessions li')
    await waitFor(async () => (await items.count()) === 200, 30_000, 'the first page of 200')
    assert.equal(await page.locator('#sessions-count').textContent(), '200 of 200+ sessions')
    await page.locator('#sessions-more').click()
    await waitFor(async () => (await items.count()) === 231, 30_000, 'the second page')
    assert.equal(await page.locator('#sessions-more').isHidden(), true)
    await page.locator('#session-filter').fill('old-22')
    // Which sessions match (the list's own order, newest first, ties broken by id, is not the
    // titles' order: these were made within the same millisecond).
    assert.deepEqual(
      (await items.locator('bdi.title').allTextContents()).sort(),
      Array.from({ length: 10 }, (_, i) => `old-22${i}`),
    )
    await page.locator('#session-filter').fill('')
    assert.equal(await items.count(), 231)
    assert.deepEqual(watch.unexpected(), [], 'no console errors, no failed requests')
  })
})
