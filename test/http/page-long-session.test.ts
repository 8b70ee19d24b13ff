// The session page on a session longer than one view, in a real browser (Debian's Chromium): the
// view lists the last 50 blocks with a button for the earlier ones, and a block cut to fit the
// view has a button that loads the whole block.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { SESSION_VIEW_BLOCK_CHARS } from '../../src/engine/schemas.js'
import type { VisServer } from '../../src/http/server.js'
import { launchChromium } from './browser-helpers.js'
import { type client, tempHome, testServer } from './helpers.js'

const { home, root } = tempHome('http-page-long')
const TOKEN = 'page-long-token-0123456789abcdef'
const BIG = SESSION_VIEW_BLOCK_CHARS + 1000

describe('the session page on a long session', () => {
  let server: VisServer
  let browser: Browser
  let page: Page
  let call: ReturnType<typeof client>
  let sessionId: string
  const ids: string[] = []

  before(async () => {
    ;({ server, call } = await testServer({ home, pool: { size: 1 }, token: TOKEN }))
    sessionId = (await call('POST', '/v1/sessions', { roots: [root], title: 'long' })).body.id
    for (let i = 0; i < 51; i++) {
      const b = await call('POST', `/v1/sessions/${sessionId}/blocks`, { code: `print(${i})` })
      assert.equal(b.status, 200, b.text.slice(0, 300))
      ids.push(b.body.id)
    }
    const big = await call('POST', `/v1/sessions/${sessionId}/blocks`, {
      code: `print('o' * ${BIG})\n'v' * ${BIG}`,
    })
    assert.equal(big.status, 200, big.text.slice(0, 300))
    ids.push(big.body.id)
    browser = await launchChromium()
    page = await (await browser.newContext()).newPage()
  })
  after(async () => {
    await browser?.close()
    await server?.close()
  })

  test('the last blocks show, the earlier ones on request, and a cut block loads whole', async () => {
    await page.goto(`${server.url}/?token=${TOKEN}`)
    await page.locator(`a[data-session="${sessionId}"]`).click({ timeout: 30_000 })
    await page.locator('#session-meta').waitFor()
    const articles = page.locator('#blocks article.block')
    await page.locator(`article[data-block="${ids.at(-1)}"]`).waitFor()
    assert.equal(await articles.count(), 50)
    const earlier = page.locator('#earlier-blocks')
    assert.match((await earlier.textContent()) ?? '', /Show 2 earlier blocks/)
    await earlier.click()
    await page.locator(`article[data-block="${ids[0]}"]`).waitFor({ timeout: 10_000 })
    assert.equal(await articles.count(), 52)
    assert.equal(await articles.first().getAttribute('data-block'), ids[0], 'the earlier blocks come first')
    assert.equal(await page.locator('#earlier-blocks').count(), 0, 'nothing earlier is left')

    const big = page.locator(`article[data-block="${ids.at(-1)}"]`)
    assert.equal(await big.locator('div.result').count(), 0, 'the cut value is not shown')
    await big.locator('button.load-whole').click()
    await big.locator('div.result').waitFor({ timeout: 10_000 })
    assert.equal(await big.locator('button.load-whole').count(), 0)
    assert.match((await big.locator('div.result').textContent()) ?? '', /^→ "v{100}/)
  })
})
