// The session page as a workbench (issue 36 §2), in Debian's Chromium behind the token as `vis
// serve` runs it, the model being the provider double (the real OpenAI wire): a block run by hand
// with Ctrl-Enter; an agent turn typed on the page, its iterations streaming in, its approval
// answered (approve, then deny, each with a note) and a turn cancelled; a draft reviewed (per
// file, binaries named) and applied through a conflict with the digest on screen as `expect`;
// without a model the page says how to configure one. A page from another site can do none of
// the page's writes. No console errors; screenshots at 420, 800 and 1280 px.
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import type { VisServer } from '../../src/http/server.js'
import { ProviderDouble, pyCall } from '../agent/double.js'
import { launchChromium, staticSite } from './browser-helpers.js'
import { type client, tempHome, testServer, waitFor } from './helpers.js'
import { screenshots, watchPage } from './page-watch.js'

const { home, root } = tempHome('http-page-workbench')
const TOKEN = 'page-workbench-token-0123456789abcdef'

describe('the session page as a workbench', () => {
  let server: VisServer
  let double: ProviderDouble
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let watch: ReturnType<typeof watchPage>
  let call: ReturnType<typeof client>
  let sessionId: string

  before(async () => {
    writeFileSync(join(root, 'secret.txt'), 'the launch code is 1234\n')
    double = await new ProviderDouble().start()
    writeFileSync(
      join(home, 'agent.json'),
      JSON.stringify({
        model: 'openai/double-model',
        providers: { openai: { baseURL: double.openaiURL, apiKey: 'sk-page' } },
        approvals: { rules: [{ tool: 'cat', match: 'secret' }] },
      }),
    )
    ;({ server, call } = await testServer({ home, pool: { size: 1 }, token: TOKEN }))
    browser = await launchChromium()
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    page = await context.newPage()
    watch = watchPage(page)
    sessionId = (await call('POST', '/v1/sessions', { roots: [root], title: 'workbench' })).body.id
    assert.equal((await page.goto(`${server.url}/?token=${TOKEN}`))?.status(), 200)
    await page.locator(`a[data-session="${sessionId}"]`).click({ timeout: 30_000 })
    await page.locator('#session-meta').waitFor()
  })
  after(async () => {
    await browser?.close()
    await server?.close()
    await double?.close()
  })

  const turnEl = (id: string, status?: string) =>
    page.locator(`article.turn[data-turn="${id}"]${status ? `[data-status="${status}"]` : ''}`)
  const lastTurn = async () => {
    const { turns } = (await call('GET', `/v1/sessions/${sessionId}/turns`)).body
    return turns.at(-1)
  }

  test('a block run by hand: typed in the editor box, Ctrl-Enter', async () => {
    const box = page.locator('#code-input')
    await box.fill('x = 6 * 7\nprint("by hand", x)')
    await box.press('Control+Enter')
    const el = page.locator('article.block[data-status="done"]').filter({ hasText: 'by hand' })
    await el.waitFor({ timeout: 30_000 })
    assert.equal(await el.locator('pre.stdout').textContent(), 'by hand 42\n')
    assert.equal(await box.inputValue(), '', 'the box is ready for the next one')
    const { blocks } = (await call('GET', `/v1/sessions/${sessionId}`)).body
    assert.equal(blocks.at(-1).code, 'x = 6 * 7\nprint("by hand", x)')
    // The session's state carries on, as a notebook's does.
    await box.fill('x + 1')
    await page.locator('#run-button').click()
    await page.locator('article.block[data-status="done"] .result').filter({ hasText: '→ 43' }).waitFor()
  })

  test('an agent turn from the page: the model named, its approval answered with a note, iterations shown', async () => {
    assert.equal(await page.locator('#turn-model').textContent(), 'model openai/double-model')
    double.script([
      { calls: [pyCall('r = await cat("secret.txt")\nprint(r["content"])')] },
      (req) => ({ text: `saw: ${JSON.stringify(req.body).includes('launch code is 1234')}` }),
    ])
    await page.locator('#turn-prompt').fill('read the secret')
    await page.locator('#turn-button').click()
    const approval = page.locator('#approvals article.approval')
    await approval.waitFor({ timeout: 30_000 })
    assert.equal(await approval.locator('.tool').textContent(), 'cat')
    assert.match((await approval.locator('pre.args').textContent()) ?? '', /secret\.txt/)
    const turn = await lastTurn()
    // The iteration that asked is on the page while the turn waits.
    await turnEl(turn.id, 'running')
      .locator('pre.tool-call')
      .filter({ hasText: 'cat("secret.txt")' })
      .waitFor()
    await screenshots(page, 'workbench-approval')
    await approval.locator('input.approval-note').fill('fine for the test')
    await approval.locator('button.approve').click()
    await turnEl(turn.id, 'done').waitFor({ timeout: 30_000 })
    assert.equal(await approval.count(), 0)
    assert.equal(await turnEl(turn.id).locator('pre.answer').textContent(), 'saw: true')
    assert.equal(await turnEl(turn.id).locator('ol.iterations > li').count(), 2)
    const [decided] = (await call('GET', `/v1/sessions/${sessionId}/approvals`)).body.approvals
    assert.deepEqual(
      [decided.status, decided.decided_by, decided.note],
      ['approved', 'page', 'fine for the test'],
    )
  })

  test('an approval denied from the page: the guest reads the note', async () => {
    double.script([
      { calls: [pyCall('r = await cat("secret.txt")\nprint(r["content"])')] },
      (req) => {
        const m = /denied by page: ([a-z ]+)/.exec(JSON.stringify(req.body))
        return { text: m ? `denied: ${m[1]}` : 'not denied' }
      },
    ])
    await page.locator('#turn-prompt').fill('read the secret again')
    await page.locator('#turn-prompt').press('Control+Enter')
    const approval = page.locator('#approvals article.approval')
    await approval.waitFor({ timeout: 30_000 })
    await approval.locator('input.approval-note').fill('not this time')
    await approval.locator('button.deny').click()
    const turn = await lastTurn()
    await turnEl(turn.id, 'done').waitFor({ timeout: 30_000 })
    assert.equal(await turnEl(turn.id).locator('pre.answer').textContent(), 'denied: not this time')
    const approvals = (await call('GET', `/v1/sessions/${sessionId}/approvals?status=denied`)).body.approvals
    assert.deepEqual(
      approvals.map((a: { note: string; decided_by: string }) => [a.decided_by, a.note]),
      [['page', 'not this time']],
    )
  })

  test('a running turn streams its iterations in and is cancelled from the page', async () => {
    double.script([
      {
        text: 'Looping until stopped.',
        calls: [pyCall('import time\nprint("spinning", flush=True)\nwhile True:\n    time.sleep(0.01)')],
      },
    ])
    await page.locator('#turn-prompt').fill('spin')
    await page.locator('#turn-button').click()
    await waitFor(async () => (await lastTurn())?.prompt === 'spin', 30_000, 'the turn')
    const turn = await lastTurn()
    const el = turnEl(turn.id, 'running')
    await el.locator('pre.tool-call').filter({ hasText: 'while True' }).waitFor({ timeout: 30_000 })
    assert.equal(await el.locator('pre.model-text').first().textContent(), 'Looping until stopped.')
    // Its block is on the page, running, marked as the agent's.
    const block = page.locator('article.block[data-status="running"]').filter({ hasText: 'spinning' })
    await block.waitFor({ timeout: 30_000 })
    assert.equal(await block.locator('.by-turn').textContent(), 'by the agent')
    await el.locator('button.cancel-turn').click()
    await turnEl(turn.id, 'cancelled').waitFor({ timeout: 30_000 })
    assert.equal((await call('GET', `/v1/sessions/${sessionId}/turns/${turn.id}`)).body.status, 'cancelled')
    await page.locator('article.block[data-status="failed"]').filter({ hasText: 'spinning' }).waitFor()
  })

  test('a draft reviewed per file and applied through a conflict; another site can do none of it', async () => {
    writeFileSync(join(root, 'keep.txt'), 'one\ntwo\n')
    writeFileSync(join(root, 'gone.txt'), 'bye\n')
    writeFileSync(join(root, 'clash.txt'), 'base\n')
    assert.equal((await call('POST', `/v1/sessions/${sessionId}/draft`, { label: 'review me' })).status, 201)
    // The real directory moves on under the draft, before the block whose end makes the page fetch the
    // diff: written after it, the page could show a diff (and digest) from before this write.
    writeFileSync(join(root, 'clash.txt'), 'their side\n')
    const r = await call('POST', `/v1/sessions/${sessionId}/blocks`, {
      code: [
        "open('keep.txt', 'w').write('one\\nTWO\\n')",
        "import os; os.remove('gone.txt')",
        "open('new.txt', 'w').write('fresh\\n')",
        "open('blob.bin', 'wb').write(bytes(range(256)))",
        "open('clash.txt', 'w').write('draft side\\n')",
      ].join('\n'),
    })
    assert.equal(r.body.error, null, r.text)
    const draft = page.locator('#draft[data-mode="draft"]')
    await draft.locator('details.file[data-path="blob.bin"]').waitFor({ timeout: 30_000 })
    const files = await draft
      .locator('details.file')
      .evaluateAll((els) => els.map((e) => [e.getAttribute('data-path'), e.getAttribute('data-change')]))
    assert.deepEqual(
      new Map(files as [string, string][]),
      new Map([
        ['blob.bin', 'added'],
        ['clash.txt', 'changed'],
        ['gone.txt', 'deleted'],
        ['keep.txt', 'changed'],
        ['new.txt', 'added'],
      ]),
    )
    assert.equal(await draft.locator('details.file[data-path="blob.bin"] .binary').count(), 1)
    assert.match(
      (await draft.locator('details.file[data-path="blob.bin"] pre.diff').textContent()) ?? '',
      /^Binary files /m,
    )
    assert.match(
      (await draft.locator('details.file[data-path="keep.txt"] pre.diff').textContent()) ?? '',
      /^-two\n\+TWO$/m,
    )
    await screenshots(page, 'workbench-draft')

    // Another site's page tries the page's writes with the user's browser: none lands.
    const evil = await staticSite('127.0.0.2', { '/': attackPage(server.url, sessionId) })
    try {
      const attacker = await context.newPage()
      await attacker.goto(`${evil.origin}/`)
      await attacker.waitForFunction('document.title.startsWith("done")', undefined, { timeout: 30_000 })
      assert.match(await attacker.title(), /cors-apply:blocked/)
      await attacker.close()
    } finally {
      await evil.close()
    }
    assert.equal(
      (await call('GET', `/v1/sessions/${sessionId}/draft`)).body.mode,
      'draft',
      'still in its draft',
    )
    assert.equal(readFileSync(join(root, 'keep.txt'), 'utf8'), 'one\ntwo\n')
    assert.equal(
      (await call('GET', `/v1/sessions/${sessionId}/turns`)).body.turns.length,
      3,
      'no turn was started',
    )
    // What refused them: the Origin guard, for each route the page writes to.
    for (const path of ['draft/apply', 'draft/abandon', 'turns', 'blocks', 'approvals/apr_x']) {
      const refused = await call('POST', `/v1/sessions/${sessionId}/${path}`, '{}', {
        origin: 'http://127.0.0.2:1',
        'content-type': 'text/plain',
      })
      assert.equal(refused.status, 403, `${path}: ${refused.text}`)
      assert.equal(refused.body.error.code, 'http.origin-not-allowed')
    }

    // Apply: the digest on screen goes as `expect`; the conflict offers theirs/ours.
    const shownDigest = await page.locator('#draft').getAttribute('data-digest')
    const current = (await call('GET', `/v1/sessions/${sessionId}/draft/diff`)).body.digest
    assert.equal(shownDigest, current)
    const sent: unknown[] = []
    page.on('request', (req) => {
      if (req.url().endsWith('/draft/apply')) sent.push(JSON.parse(req.postData() ?? 'null'))
    })
    watch.expect(409, `/v1/sessions/${sessionId}/draft/apply`)
    await draft.locator('button.apply').click()
    const conflict = page.locator('#draft .conflict')
    await conflict.waitFor({ timeout: 30_000 })
    assert.deepEqual(await conflict.locator('li').allTextContents(), ['clash.txt'])
    await conflict.locator('button.apply-ours').click()
    await page.locator('#draft[data-mode="trunk"]').waitFor({ timeout: 30_000 })
    assert.deepEqual(sent, [{ expect: current }, { expect: current, ours: true }])
    assert.equal(readFileSync(join(root, 'keep.txt'), 'utf8'), 'one\nTWO\n')
    assert.equal(readFileSync(join(root, 'clash.txt'), 'utf8'), 'draft side\n')
    assert.equal(readFileSync(join(root, 'new.txt'), 'utf8'), 'fresh\n')
    assert.equal(existsSync(join(root, 'gone.txt')), false)
    assert.equal(readFileSync(join(root, 'blob.bin')).length, 256)
  })

  test('a draft that moved after the person looked is not applied: the page says so and shows it again', async () => {
    const made = await call('POST', `/v1/sessions/${sessionId}/draft`, { label: 'moving' })
    assert.equal(made.status, 201, made.text)
    const first = await call('POST', `/v1/sessions/${sessionId}/blocks`, {
      code: "open('seen.txt', 'w').write('seen\\n')",
    })
    assert.equal(first.body.error, null, first.text)
    const draft = page.locator('#draft[data-mode="draft"]')
    await draft.locator('details.file[data-path="seen.txt"]').waitFor({ timeout: 30_000 })
    const seen = await page.locator('#draft').getAttribute('data-digest')
    // The person is looking at this diff when the draft moves on; the page's own refresh is held
    // back (the diff route fails for it), so the screen still shows what was seen.
    watch.expectAborted(`/v1/sessions/${sessionId}/draft/diff`)
    let held = 0
    await page.route('**/draft/diff', (r) => {
      held++
      return r.abort()
    })
    const moved = await call('POST', `/v1/sessions/${sessionId}/blocks`, {
      code: "open('unseen.txt', 'w').write('x')",
    })
    assert.equal(moved.body.error, null, moved.text)
    await waitFor(
      async () => (await call('GET', `/v1/sessions/${sessionId}/draft/diff`)).body.digest !== seen,
      30_000,
      'the draft to move',
    )
    // The page has heard of the move (its refresh was held back) before the route opens again, so no
    // late event redraws the new diff under the person's click.
    await waitFor(() => held > 0, 30_000, "the page's refresh after the move")
    assert.equal(await draft.locator('details.file[data-path="unseen.txt"]').count(), 0)
    await page.unroute('**/draft/diff')
    watch.expect(409, `/v1/sessions/${sessionId}/draft/apply`)
    await draft.locator('button.apply').click()
    await draft.locator('details.file[data-path="unseen.txt"]').waitFor({ timeout: 30_000 })
    // The new diff can be drawn (by the draft's own events) a moment before the refusal's note.
    await draft
      .locator('.draft-note', { hasText: 'changed since the diff that was reviewed' })
      .waitFor({ timeout: 30_000 })
    assert.equal(existsSync(join(root, 'seen.txt')), false, 'nothing landed')
    assert.equal(existsSync(join(root, 'unseen.txt')), false)
    assert.notEqual(await page.locator('#draft').getAttribute('data-digest'), seen)
    assert.equal((await call('POST', `/v1/sessions/${sessionId}/draft/abandon`, {})).status, 200)
    await page.locator('#draft[data-mode="trunk"]').waitFor({ timeout: 30_000 })
  })

  test('a draft is abandoned from the page; no console errors all along', async () => {
    assert.equal((await call('POST', `/v1/sessions/${sessionId}/draft`, { label: 'throwaway' })).status, 201)
    const r = await call('POST', `/v1/sessions/${sessionId}/blocks`, {
      code: "open('tmp.txt', 'w').write('x')",
    })
    assert.equal(r.body.error, null, r.text)
    await page.locator('#draft details.file[data-path="tmp.txt"]').waitFor({ timeout: 30_000 })
    await page.locator('#draft button.abandon').click()
    await page.locator('#draft[data-mode="trunk"]').waitFor({ timeout: 30_000 })
    assert.equal(existsSync(join(root, 'tmp.txt')), false)
    await screenshots(page, 'workbench')
    assert.deepEqual(watch.unexpected(), [], 'no console errors, no failed requests')
  })

  test('without a model the turn box says how to configure one', async () => {
    // Another server, on a home without agent.json (and no VIS_MODEL).
    const bare = mkdtempSync(join(tmpdir(), 'vis-page-bare-home-'))
    const other = await testServer({ home: bare, pool: { size: 0 }, token: TOKEN })
    try {
      const s = (await other.call('POST', '/v1/sessions', { title: 'no model' })).body
      const p = await context.newPage()
      const w = watchPage(p)
      await p.goto(`${other.server.url}/?token=${TOKEN}#/s/${s.id}`)
      const form = p.locator('#turn-form[data-unconfigured]')
      await form.waitFor({ timeout: 30_000 })
      assert.equal(await p.locator('#turn-prompt').isDisabled(), true)
      const says = (await form.locator('.configure').textContent()) ?? ''
      assert.match(says, /VIS_MODEL=<provider>\/<model>/)
      assert.match(says, /agent\.json/)
      assert.deepEqual(w.unexpected(), [])
      await p.close()
    } finally {
      await other.server.close()
    }
  })
})

// Another site's page, in the user's browser (which holds the page's token): it tries the
// writes the page makes, as simple requests (no preflight) and as a preflighted JSON fetch.
function attackPage(target: string, sessionId: string): string {
  const base = `${target}/v1/sessions/${sessionId}`
  return `<!doctype html><meta charset=utf-8><title>attack</title>
<iframe name=sink></iframe>
<form id=f method=POST target=sink enctype="text/plain" action="${base}/draft/apply"><input name='{"ours":true,"x":"' value='"}'></form>
<script>
const B = ${JSON.stringify(base)}, report = []
async function attempt(label, f) { try { report.push(label + ':' + (await f())) } catch (e) { report.push(label + ':blocked') } }
const simple = (path, body) => fetch(B + path, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body }).then((r) => r.type)
;(async () => {
  await attempt('nocors-apply', () => simple('/draft/apply', '{"ours":true}'))
  await attempt('nocors-abandon', () => simple('/draft/abandon', '{}'))
  await attempt('nocors-turn', () => simple('/turns', '{"prompt":"pwn"}'))
  await attempt('nocors-block', () => simple('/blocks', '{"code":"open(\\'keep.txt\\',\\'w\\').write(\\'pwned\\')"}'))
  await attempt('cors-apply', () => fetch(B + '/draft/apply', { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body: '{"ours":true}' }).then((r) => r.status))
  const loaded = new Promise((r) => document.querySelector('iframe').addEventListener('load', r, { once: true }))
  document.getElementById('f').submit(); await loaded
  document.title = 'done ' + report.join(' ')
})()
</script>`
}
