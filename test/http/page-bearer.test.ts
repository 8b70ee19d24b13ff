// The session page reads its live event stream with fetch (the token as a bearer header, since
// no cookie carries it and an EventSource cannot set one), so the reconnecting EventSource did by
// itself is the page's own code now. Here a plain TCP relay stands between Chromium and the server
// so the test can cut the stream's connection: the page must reconnect with its token and
// Last-Event-ID (no event shown twice) and show what ran while it was away and after. A download
// link, whose bare URL the server now refuses, saves the attachment's bytes through the same fetch.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { type AddressInfo, connect, createServer, type Socket } from 'node:net'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import type { VisServer } from '../../src/http/server.js'
import { launchChromium } from './browser-helpers.js'
import { type client, tempHome, testServer, waitFor } from './helpers.js'

const { home, root } = tempHome('http-page-stream')
const TOKEN = 'page-stream-token-0123456789abcdef'

describe("the session page's token-carrying requests", () => {
  let server: VisServer
  let call: ReturnType<typeof client>
  let browser: Browser
  let page: Page
  let relay: ReturnType<typeof createServer>
  let relayURL: string
  // Each event-stream request the page sent (its head), and the sockets carrying one.
  const streamRequests: string[] = []
  const streamSockets = new Set<Socket>()

  before(async () => {
    ;({ server, call } = await testServer({ home, pool: { size: 1 }, token: TOKEN }))
    const port = Number(new URL(server.url).port)
    relay = createServer((client) => {
      const upstream = connect(port, '127.0.0.1')
      client.on('data', (chunk: Buffer) => {
        const head = chunk.toString('latin1')
        if (/^GET \/v1\/sessions\/[^ ]+\/events/.test(head)) {
          streamRequests.push(head)
          streamSockets.add(client)
        }
        upstream.write(chunk)
      })
      upstream.pipe(client)
      const drop = () => {
        client.destroy()
        upstream.destroy()
        streamSockets.delete(client)
      }
      client.on('close', drop).on('error', drop)
      upstream.on('close', drop).on('error', drop)
    })
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', () => r()))
    relayURL = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`
    browser = await launchChromium()
    page = await browser.newPage()
  })
  after(async () => {
    await browser?.close()
    for (const s of streamSockets) s.destroy()
    await new Promise<void>((r) => (relay ? relay.close(() => r()) : r()))
    await server?.close()
  })

  const stdout = (text: string) => page.locator('article[data-block] pre.stdout', { hasText: text })

  test('a cut stream reconnects with the bearer token and Last-Event-ID, and misses nothing', async () => {
    const s = await call('POST', '/v1/sessions', { roots: [root], title: 'streamed' })
    assert.equal(s.status, 201, s.text)
    await page.goto(`${relayURL}/?token=${TOKEN}#/s/${s.body.id}`)
    await waitFor(async () => (await page.locator('#status').textContent()) === 'live', 30_000, 'live')
    assert.equal(streamRequests.length, 1)
    assert.match(streamRequests[0]!, new RegExp(`^authorization: Bearer ${TOKEN}\\r$`, 'im'))
    assert.doesNotMatch(streamRequests[0]!, /^cookie:/im)

    const first = await call('POST', `/v1/sessions/${s.body.id}/blocks`, { code: "print('before the cut')" })
    assert.equal(first.status, 200, first.text)
    await stdout('before the cut').waitFor({ timeout: 30_000 })

    // The connection drops (a proxy restarts, a laptop sleeps); a block runs meanwhile.
    for (const sock of streamSockets) sock.destroy()
    const during = await call('POST', `/v1/sessions/${s.body.id}/blocks`, { code: "print('during the cut')" })
    assert.equal(during.status, 200, during.text)

    await waitFor(() => streamRequests.length === 2, 30_000, 'the page reconnected')
    const again = streamRequests[1]!
    assert.match(again, new RegExp(`^authorization: Bearer ${TOKEN}\\r$`, 'im'))
    assert.match(again, /^last-event-id: \S+\r$/im, 'it says where it left off')
    await stdout('during the cut').waitFor({ timeout: 30_000 })
    await waitFor(async () => (await page.locator('#status').textContent()) === 'live', 30_000, 'live again')

    const last = await call('POST', `/v1/sessions/${s.body.id}/blocks`, { code: "print('after the cut')" })
    assert.equal(last.status, 200, last.text)
    await stdout('after the cut').waitFor({ timeout: 30_000 })
    // Nothing was shown twice: each block's output once.
    for (const text of ['before the cut', 'during the cut', 'after the cut']) {
      assert.equal(await stdout(text).count(), 1, text)
      assert.equal((await stdout(text).textContent())?.trim(), text)
    }
  })

  test('a download link saves the attachment through a fetch with the token; its bare URL is refused', async () => {
    const s = await call('POST', '/v1/sessions', { roots: [root], title: 'downloads' })
    assert.equal(s.status, 201, s.text)
    const b = await call('POST', `/v1/sessions/${s.body.id}/blocks`, {
      code: "vis_attach_bytes(b'name,count\\nfigs,3\\n', 'notes.csv')",
    })
    assert.equal(b.status, 200, b.text)
    const url = b.body.attachments[0].url as string
    await page.goto(`${relayURL}/#/s/${s.body.id}`)
    const link = page.locator(`a[data-attachment="${b.body.attachments[0].id}"]`)
    await link.waitFor({ timeout: 30_000 })
    const saved = page.waitForEvent('download', { timeout: 30_000 })
    await link.click()
    const download = await saved
    assert.equal(download.suggestedFilename(), 'notes.csv')
    assert.equal(readFileSync(await download.path(), 'utf8'), 'name,count\nfigs,3\n')
    // Opened without the page's header, the URL is refused: nothing but the bearer authorizes.
    const bare = await fetch(`${server.url}${url}`)
    assert.equal(bare.status, 401)
    assert.equal(((await bare.json()) as { error: { code: string } }).error.code, 'http.unauthorized')
  })
})
