// Issue 30 §4: attachments come from the sandbox, bytes and media type alike. An SVG (or HTML)
// attachment without a name was served with no Content-Disposition and no CSP: opened from its
// URL in the browser, its script ran as the API's origin and drove the API (then with the page's
// token cookie; now it would read the token the page keeps in localStorage). Here the guest makes such attachments (with script, nameless and named, and
// with a lying type: HTML bytes claimed as image/png, an SVG named .png), and real PNG, JPEG, GIF
// and WebP images; then the answers are checked, and Debian's Chromium opens the URLs.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { createEngine, type Engine } from '../../src/engine/engine.js'
import { launchChromium, serveRecorded } from './browser-helpers.js'
import { python, tempHome, waitFor } from './helpers.js'

const { home, root } = tempHome('http-attachment-sandbox')
const TOKEN = 'attachment-sandbox-token-0123456789'

// What the script would do as the page's origin: take the token the page keeps in localStorage
// and create a session (the API, as the user).
const SCRIPT =
  "fetch('/v1/sessions', {method: 'POST', headers: {'content-type': 'application/json', " +
  "authorization: 'Bearer ' + localStorage.getItem('vis.token')}, body: JSON.stringify({title: 'pwned'})})"
const SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>${SCRIPT}</script></svg>`
const HTML = `<!doctype html><title>x</title><script>${SCRIPT}</script>`
// Small valid images (1x1), as base64.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
const GIF = 'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7'
const WEBP = 'UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA'
// A JPEG's start (SOI, APP0 JFIF): what the server recognises it by.
const JPEG = Buffer.from([
  0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0,
]).toString('base64')

// [name given to vis_attach_bytes, the Python expression of the bytes, what must be served]
type Case = { name: string; bytes: string; inline: boolean; type: string; label: string }
const CASES: Case[] = [
  { label: 'svg, no name', name: '', bytes: JSON.stringify(SVG), inline: false, type: 'image/svg+xml' },
  {
    label: 'svg, named',
    name: 'drawing.svg',
    bytes: JSON.stringify(SVG),
    inline: false,
    type: 'image/svg+xml',
  },
  { label: 'html, no name', name: '', bytes: JSON.stringify(HTML), inline: false, type: 'text/plain' },
  { label: 'html, named', name: 'page.html', bytes: JSON.stringify(HTML), inline: false, type: 'text/html' },
  // The guest claims image/png (by the name) for bytes that are not: served as plain bytes.
  {
    label: 'html claimed image/png',
    name: 'photo.png',
    bytes: JSON.stringify(HTML),
    inline: false,
    type: 'application/octet-stream',
  },
  {
    label: 'svg named .png',
    name: 'logo.png',
    bytes: JSON.stringify(`<!-- logo -->${SVG}`),
    inline: false,
    type: 'application/octet-stream',
  },
  { label: 'png, no name', name: '', bytes: `b64(${JSON.stringify(PNG)})`, inline: true, type: 'image/png' },
  {
    label: 'png, named .svg',
    name: 'chart.svg',
    bytes: `b64(${JSON.stringify(PNG)})`,
    inline: true,
    type: 'image/png',
  },
  { label: 'jpeg', name: '', bytes: `b64(${JSON.stringify(JPEG)})`, inline: true, type: 'image/jpeg' },
  { label: 'gif', name: 'dot.gif', bytes: `b64(${JSON.stringify(GIF)})`, inline: true, type: 'image/gif' },
  { label: 'webp', name: '', bytes: `b64(${JSON.stringify(WEBP)})`, inline: true, type: 'image/webp' },
]

describe('attachments are served sandboxed, raster images alone inline', () => {
  let engine: Engine
  let server: Awaited<ReturnType<typeof serveRecorded>>
  let browser: Browser
  let sessionId: string
  const urls = new Map<string, string>()

  before(async () => {
    engine = await createEngine({ home, python, pool: { size: 1 } })
    server = await serveRecorded(engine, { token: TOKEN, bindHost: '127.0.0.1' })
    sessionId = (await engine.createSession({ roots: [root], title: 'victim' })).id
    const code = [
      'from base64 import b64decode as b64',
      ...CASES.map((c) => `vis_attach_bytes(${c.bytes}, ${JSON.stringify(c.name)})`),
    ].join('\n')
    const { block } = await engine.runBlock(sessionId, { code, timeout_ms: 30_000 })
    assert.equal(block.error, null, JSON.stringify(block.error))
    assert.equal(block.attachments.length, CASES.length)
    CASES.forEach((c, i) => {
      urls.set(c.label, server.url + block.attachments[i]!.url)
    })
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
    await server?.close()
    await engine?.close()
  })

  const sessionsCreated = () => engine.listSessions({ state: 'all' }).length - 1

  test('every attachment carries CSP sandbox and nosniff; only real raster images are inline', async () => {
    for (const c of CASES) {
      const res = await fetch(urls.get(c.label)!, { headers: { authorization: `Bearer ${TOKEN}` } })
      assert.equal(res.status, 200, c.label)
      await res.arrayBuffer()
      const h = (name: string) => res.headers.get(name)
      assert.equal(h('content-security-policy'), 'sandbox', c.label)
      assert.equal(h('x-content-type-options'), 'nosniff', c.label)
      assert.equal(h('content-type'), c.type, c.label)
      const disposition = h('content-disposition') ?? ''
      const filename = c.name ? `; filename*=UTF-8''${encodeURIComponent(c.name)}` : ''
      assert.equal(disposition, `${c.inline ? 'inline' : 'attachment'}${filename}`, c.label)
    }
  })

  test('in Chromium, opening an SVG or HTML attachment runs no script; a PNG still shows', async () => {
    const context = await browser.newContext({ acceptDownloads: true })
    const page = await context.newPage()
    // The user opened the printed URL: the token now lives in the page's localStorage.
    await page.goto(`${server.url}/?token=${TOKEN}`)
    assert.equal(await page.evaluate("localStorage.getItem('vis.token')"), TOKEN, 'the token is kept')
    // Opened with the token in its URL (no cookie carries it any more), as a person could.
    const opened = (label: string) => `${urls.get(label)!}?token=${TOKEN}`
    const posts = () => server.seen.filter((s) => s.method === 'POST').length

    for (const label of [
      'svg, no name',
      'svg, named',
      'html, named',
      'html claimed image/png',
      'svg named .png',
    ]) {
      let downloaded = false
      const download = page.waitForEvent('download', { timeout: 30_000 }).then((d) => {
        downloaded = true
        return d.cancel()
      })
      await page.goto(opened(label)).catch(() => undefined)
      // Either the browser made it a download, or it rendered it and its script sent its POST.
      await waitFor(() => downloaded || posts() > 0, 30_000, `${label}: a download or the script's request`)
      assert.equal(posts(), 0, `${label}: its script reached the API`)
      assert.ok(downloaded, `${label} was not a download`)
      await download
    }
    assert.equal(sessionsCreated(), 0, 'no script created a session')

    // The page's own use stays: a PNG opened from its URL renders as an image.
    const res = await page.goto(opened('png, no name'))
    assert.equal(res?.status(), 200)
    const width = await page.locator('img').evaluate((el) => (el as { naturalWidth: number }).naturalWidth)
    assert.equal(width, 1, 'the PNG rendered inline')
    await context.close()
    assert.equal(posts(), 0)
  })
})
