// The session page at `/` in a real browser (Debian's Chromium), behind the token as `vis serve`
// runs it: the printed URL lets the page in (token kept in localStorage), a block streams in live, its code shows
// formatted by ruff, an image attachment renders, an error shows its excerpt and hints, and the
// interrupt button stops a running block. A draft shows its label and live diff.
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import type { VisServer } from '../../src/http/server.js'
import { launchChromium } from './browser-helpers.js'
import { type client, tempHome, testServer, waitFor } from './helpers.js'

const { home, root } = tempHome('http-page')
const TOKEN = 'page-test-token-0123456789abcdef'
const GO = join(root, 'go')

// Written as a hurried model writes it; the page shows it formatted. It prints, waits for the
// test's signal (so the test sees output while the block still runs), then attaches a PNG.
const STREAMING = [
  'import time,struct,zlib,os',
  "print('tick',0,flush=True)",
  `while not os.path.exists(${JSON.stringify(GO)}):time.sleep(0.02)`,
  "print('tick',1,flush=True)",
  'def chunk(t,d):return struct.pack(">I",len(d))+t+d+struct.pack(">I",zlib.crc32(t+d))',
  "raw=b''.join(b'\\x00'+b'\\xff\\x00\\x00'*4 for _ in range(3))",
  "png=b'\\x89PNG\\r\\n\\x1a\\n'+chunk(b'IHDR',struct.pack('>IIBBBBB',4,3,8,2,0,0,0))+chunk(b'IDAT',zlib.compress(raw))+chunk(b'IEND',b'')",
  "vis_attach_bytes(png,'red.png')",
].join('\n')

describe('the session page', () => {
  let server: VisServer
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let call: ReturnType<typeof client>
  let sessionId: string

  before(async () => {
    ;({ server, call } = await testServer({ home, pool: { size: 1 }, token: TOKEN, interruptAckMs: 2000 }))
    browser = await launchChromium()
    context = await browser.newContext()
    page = await context.newPage()
  })
  after(async () => {
    await browser?.close()
    await server?.close()
  })

  const block = (id: string) => page.locator(`article[data-block="${id}"]`)

  test('without the token the page says how to get in; the printed URL lets it in, no cookie set', async () => {
    // The page's files load without the token (they hold no data); its first API call is refused
    // and the page says how to get in.
    const bare = await page.goto(`${server.url}/`)
    assert.equal(bare?.status(), 200)
    await page.locator('#auth').waitFor({ state: 'visible' })
    assert.match((await page.locator('#auth').textContent()) ?? '', /\?token=/)

    const res = await page.goto(`${server.url}/?token=${TOKEN}`)
    assert.equal(res?.status(), 200)
    assert.equal(page.url(), `${server.url}/`, 'the token left the address bar')
    // Kept in this origin's (scheme+host+port) storage, never in a cookie: a cookie would also go
    // to every other server on 127.0.0.1 (test/attacks/page-cookie-other-port.test.ts).
    assert.deepEqual(await context.cookies(), [])
    assert.equal(await page.evaluate("localStorage.getItem('vis.token')"), TOKEN)
    // A reload, and the page without ?token=, keep working from what was stored.
    assert.equal((await page.goto(`${server.url}/`))?.status(), 200)
    await page.locator('#sessions-count').waitFor({ state: 'attached' })
    assert.equal(await page.locator('#auth').isHidden(), true)

    const created = await call('POST', '/v1/sessions', { roots: [root], title: 'watched' })
    assert.equal(created.status, 201)
    sessionId = created.body.id
    // The list picks new sessions up by itself.
    await page.locator(`a[data-session="${sessionId}"]`).click({ timeout: 30_000 })
    await page.locator('#session-meta').waitFor()
    assert.match((await page.locator('#session-meta').textContent()) ?? '', /open · worker live/)
  })

  test('a block streams in live, formatted, and its image attachment renders', async () => {
    const sub = await call(
      'POST',
      `/v1/sessions/${sessionId}/blocks`,
      { code: STREAMING },
      { prefer: 'respond-async' },
    )
    assert.equal(sub.status, 202, sub.text)
    const id = sub.body.id as string
    const stdout = block(id).locator('pre.stdout')
    await stdout.filter({ hasText: 'tick 0' }).waitFor({ timeout: 30_000 })
    // Seen on the page while the server still runs it: it streamed.
    assert.equal((await call('GET', `/v1/sessions/${sessionId}/blocks/${id}`)).body.status, 'running')
    assert.equal(await block(id).getAttribute('data-status'), 'running')
    assert.equal(await block(id).locator('button.interrupt').count(), 1)
    const code = (await block(id).locator('pre.code').textContent()) ?? ''
    assert.match(code, /^import time, struct, zlib, os$/m, 'formatted by ruff')
    assert.match(code, /^print\('tick', 0, flush=True\)$/m)
    assert.match(code, /^def chunk\(t, d\):\n {4}return /m)

    writeFileSync(GO, '')
    await page.locator(`article[data-block="${id}"][data-status="done"]`).waitFor({ timeout: 30_000 })
    assert.equal((await stdout.textContent()) ?? '', 'tick 0\ntick 1\n')
    const img = block(id).locator('img[data-attachment]')
    await img.waitFor({ timeout: 10_000 })
    type Img = { complete: boolean; naturalWidth: number; naturalHeight: number }
    const sel = `article[data-block="${id}"] img[data-attachment]`
    await page.waitForFunction(
      `(() => { const el = document.querySelector(${JSON.stringify(sel)}); return !!el && el.complete && el.naturalWidth > 0 })()`,
      undefined,
      { timeout: 10_000 },
    )
    const size = await img.evaluate((el) => [
      (el as unknown as Img).naturalWidth,
      (el as unknown as Img).naturalHeight,
    ])
    assert.deepEqual(size, [4, 3], 'the PNG the block made, decoded by the browser')
  })

  test('an error shows its excerpt and hints', async () => {
    const r = await call('POST', `/v1/sessions/${sessionId}/blocks`, {
      code: 'x = 1\ny = undefined_thing + x',
    })
    assert.equal(r.status, 200)
    const el = block(r.body.id)
    await el.locator('.error').waitFor({ timeout: 30_000 })
    assert.equal(await el.getAttribute('data-status'), 'failed')
    assert.match((await el.locator('.error pre.message').textContent()) ?? '', /NameError/)
    assert.match((await el.locator('.error pre.excerpt').textContent()) ?? '', /undefined_thing \+ x/)
    assert.match((await el.locator('.error ul.hints').textContent()) ?? '', /apropos\('undefined_thing'\)/)
  })

  test('the interrupt button stops the running block', async () => {
    const sub = await call(
      'POST',
      `/v1/sessions/${sessionId}/blocks`,
      { code: 'import time\nprint("looping", flush=True)\nwhile True:\n    time.sleep(0.01)' },
      { prefer: 'respond-async' },
    )
    const id = sub.body.id as string
    await block(id).locator('pre.stdout').filter({ hasText: 'looping' }).waitFor({ timeout: 30_000 })
    // A block sent behind it shows up queued, with a cancel button that works.
    const queued = await call(
      'POST',
      `/v1/sessions/${sessionId}/blocks`,
      { code: 'never = 1' },
      { prefer: 'respond-async' },
    )
    const q = queued.body.id as string
    await page.locator(`article[data-block="${q}"][data-status="queued"]`).waitFor({ timeout: 30_000 })
    await block(q).locator('button.cancel').click()
    await page.locator(`article[data-block="${q}"][data-status="cancelled"]`).waitFor({ timeout: 30_000 })
    assert.equal(
      (await call('GET', `/v1/sessions/${sessionId}/blocks/${q}`)).body.error.code,
      'block.cancelled',
    )
    await block(id).locator('button.interrupt').click()
    await page.locator(`article[data-block="${id}"][data-status="failed"]`).waitFor({ timeout: 30_000 })
    const stored = (await call('GET', `/v1/sessions/${sessionId}/blocks/${id}`)).body
    assert.equal(stored.error.code, 'block.interrupted')
    assert.match((await block(id).locator('.error').textContent()) ?? '', /KeyboardInterrupt/)
    await waitFor(
      async () => (await call('GET', `/v1/sessions/${sessionId}`)).body.busy === false,
      10_000,
      'idle',
    )
  })

  test('the session view shows the trunk, then the draft with its label and live diff', async () => {
    const draft = page.locator('#draft')
    await page.locator('#draft[data-mode="trunk"]').waitFor({ timeout: 30_000 })
    assert.match((await draft.textContent()) ?? '', /On the trunk/)
    assert.equal(await draft.locator('pre.diff').count(), 0)

    const created = await call('POST', `/v1/sessions/${sessionId}/draft`, { label: 'try <b>bold</b> idea' })
    assert.equal(created.status, 201, created.text)
    // The draft-created event switches the view without a reload.
    await page.locator('#draft[data-mode="draft"]').waitFor({ timeout: 30_000 })
    assert.equal(
      await draft.locator('.draft-label').textContent(),
      'try <b>bold</b> idea',
      'the label is text',
    )
    assert.equal(await draft.locator('b').count(), 0, 'no markup from data')

    const r = await call('POST', `/v1/sessions/${sessionId}/blocks`, {
      code: "open('page-note.txt', 'w').write('hello from the draft\\n')",
    })
    assert.equal(r.status, 200, r.text)
    assert.equal(r.body.error, null)
    // block-finished refreshes the diff.
    const diff = draft.locator('pre.diff')
    await diff.filter({ hasText: 'page-note.txt' }).waitFor({ timeout: 30_000 })
    const text = (await diff.textContent()) ?? ''
    assert.match(text, /^\+\+\+ .*page-note\.txt$/m)
    assert.match(text, /^\+hello from the draft$/m)
    assert.match((await draft.locator('.draft-state').textContent()) ?? '', /1 file changed/)

    const abandoned = await call('POST', `/v1/sessions/${sessionId}/draft/abandon`, { why: 'page test' })
    assert.equal(abandoned.status, 200, abandoned.text)
    await page.locator('#draft[data-mode="trunk"]').waitFor({ timeout: 30_000 })
    assert.equal(await draft.locator('pre.diff').count(), 0)
  })
})
