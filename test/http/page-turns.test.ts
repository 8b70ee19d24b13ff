// The session page shows a session's agent turns as a tree (issue 31 §1), in a real browser
// (Debian's Chromium) behind the token as `vis serve` runs it: a turn that fans out two
// sub_loops appears when it ends (the session's SSE), with its child turns nested under it,
// each with its status, answer, usage and a link to its session; a child's page names the turn
// it came from. The model is the provider double.
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import type { VisServer } from '../../src/http/server.js'
import { ProviderDouble, pyCall } from '../agent/double.js'
import { launchChromium } from './browser-helpers.js'
import { type client, tempHome, testServer } from './helpers.js'

const { home, root } = tempHome('http-page-turns')
const TOKEN = 'page-turns-token-0123456789abcdef'

let server: VisServer
let browser: Browser
let page: Page
let call: ReturnType<typeof client>
let double: ProviderDouble

before(async () => {
  double = await new ProviderDouble().start()
  writeFileSync(
    join(home, 'agent.json'),
    JSON.stringify({
      model: 'openai/double-model',
      providers: { openai: { baseURL: double.openaiURL, apiKey: 'sk-page' } },
    }),
  )
  ;({ server, call } = await testServer({ home, pool: { size: 0 }, token: TOKEN }))
  browser = await launchChromium()
  page = await (await browser.newContext()).newPage()
})
after(async () => {
  await browser?.close()
  await server?.close()
  await double?.close()
})

test('a turn with two sub_loop children shows as a tree; a child links back to its parent; a block that printed shows its value too', async () => {
  double.script([], (req) => {
    const b = JSON.stringify(req.body)
    if (b.includes('PARENT-TASK')) {
      if (b.includes('KIDS')) return { text: 'both answered', usage: { input: 100, output: 10 } }
      return {
        calls: [
          pyCall('print("KI" + "DS", await gather(sub_loop("CHILD-ONE-TASK"), sub_loop("CHILD-TWO-TASK")))'),
        ],
        usage: { input: 100, output: 10 },
      }
    }
    return {
      text: b.includes('CHILD-ONE-TASK') ? 'answer-one' : 'answer-two',
      usage: { input: 7, output: 3 },
    }
  })
  assert.equal((await page.goto(`${server.url}/?token=${TOKEN}`))?.status(), 200)
  const s = (await call('POST', '/v1/sessions', { roots: [root], title: 'tree' })).body
  await page.locator(`a[data-session="${s.id}"]`).click({ timeout: 30_000 })
  await page.locator('#session-meta').waitFor()

  // The turn runs while the page watches: it appears when it ends.
  const turn = await call('POST', `/v1/sessions/${s.id}/turns`, { prompt: 'PARENT-TASK: ask two helpers' })
  assert.equal(turn.status, 200, turn.text)
  assert.equal(turn.body.status, 'done')
  const el = page.locator(`article.turn[data-turn="${turn.body.id}"][data-status="done"]`)
  await el.waitFor({ timeout: 30_000 })
  assert.equal(await el.locator('pre.answer').textContent(), 'both answered')
  assert.equal(await el.locator('.head .usage').textContent(), '200 in / 20 out tokens')
  assert.equal(await el.locator('.tree-usage').textContent(), 'With 2 child turn(s): 214 in / 26 out tokens')
  const kids = el.locator('li.child-turn')
  assert.equal(await kids.count(), 2)
  const shown = await kids.evaluateAll((lis) =>
    lis.map((li) => [
      li.getAttribute('data-status'),
      li.querySelector('a')?.textContent,
      li.querySelector('.child-end')?.textContent,
      li.querySelector('.usage')?.textContent,
    ]),
  )
  assert.deepEqual(shown.sort(), [
    ['done', 'CHILD-ONE-TASK', '→ answer-one', '7 in / 3 out tokens'],
    ['done', 'CHILD-TWO-TASK', '→ answer-two', '7 in / 3 out tokens'],
  ])

  // A child's page: its own turn, naming the parent turn and the block that started it.
  const childSession = turn.body.children[0].session_id as string
  await kids.locator(`a[href="#/s/${childSession}"]`).click()
  const parent = page.locator('article.turn p.parent')
  await parent.waitFor({ timeout: 30_000 })
  const block = turn.body.iterations[0].block_ids[0] as string
  assert.equal(await parent.textContent(), `Child of turn ${turn.body.id} (block ${block})`)
  await parent.locator('a').click()
  await page.locator(`article.turn[data-turn="${turn.body.id}"]`).waitFor({ timeout: 30_000 })

  // A block that printed and ends in an expression shows both, as a notebook does; its view's
  // result stays null, the value has its own field.
  const nb = await call('POST', `/v1/sessions/${s.id}/blocks`, { code: 'print("rows", 3)\n6 * 7' })
  assert.equal(nb.status, 200, nb.text)
  assert.deepEqual([nb.body.stdout, nb.body.result, nb.body.value], ['rows 3\n', null, 42])
  const cell = page.locator(`article[data-block="${nb.body.id}"][data-status="done"]`)
  await cell.waitFor({ timeout: 30_000 })
  assert.equal(await cell.locator('pre.stdout').textContent(), 'rows 3\n')
  assert.equal(await cell.locator('.result').textContent(), '→ 42')
})
