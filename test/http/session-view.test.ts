// GET /v1/sessions/{id} against a real server: the last blocks, each cut to a bounded size with a
// marker, earlier ones a page at a time, and the whole block still one request away.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { SESSION_VIEW_BLOCK_CHARS } from '../../src/engine/schemas.js'
import { startServer, type VisServer } from '../../src/http/server.js'
import { client, python, tempHome } from './helpers.js'

const { home, root } = tempHome('http-session-view')
const BIG = SESSION_VIEW_BLOCK_CHARS + 4000

describe('session view', () => {
  let server: VisServer
  let call: ReturnType<typeof client>
  let sid: string
  const ids: string[] = []
  before(async () => {
    server = await startServer({ home, python, port: 0, pool: { size: 1 } })
    call = client(server.url)
    sid = (await call('POST', '/v1/sessions', { roots: [root] })).body.id
    for (const code of [
      'x  =  1\nvis_attach_bytes("first", "one.txt")',
      `print('o' * ${BIG})\n'v' * ${BIG}`,
      'print(3)\nvis_attach_bytes("third", "three.txt")\nvis_attach_bytes("more", "four.txt")\n[3]',
    ]) {
      const b = await call('POST', `/v1/sessions/${sid}/blocks`, { code, timeout_ms: 60_000 })
      assert.equal(b.status, 200, b.text.slice(0, 300))
      ids.push(b.body.id)
    }
  })
  after(async () => {
    await server.close()
  })

  test('a block too long for the view is cut with a marker; GET the block has all of it', async () => {
    const view = await call('GET', `/v1/sessions/${sid}?format=display`)
    assert.equal(view.status, 200, view.text.slice(0, 300))
    assert.equal(view.body.blocks_before, 0)
    const [plain, big, small] = view.body.blocks
    assert.equal(
      plain.code_display,
      'x = 1\nvis_attach_bytes("first", "one.txt")\n',
      'ordinary code is still formatted for display',
    )
    assert.equal(plain.truncated, undefined)
    assert.equal(small.stdout, '3\n')
    assert.deepEqual(small.value, [3])
    assert.equal(small.truncated, undefined)
    assert.equal(big.truncated, true)
    assert.equal(big.stdout, 'o'.repeat(SESSION_VIEW_BLOCK_CHARS))
    assert.equal(big.value, null)
    const whole = await call('GET', `/v1/sessions/${sid}/blocks/${big.id}`)
    assert.equal(whole.body.stdout, `${'o'.repeat(BIG)}\n`)
    assert.equal(whole.body.value, 'v'.repeat(BIG))
    assert.equal(whole.body.truncated, undefined)
  })

  test('?limit= lists the last blocks and ?before= the page before them', async () => {
    const last = await call('GET', `/v1/sessions/${sid}?limit=2`)
    assert.deepEqual(
      last.body.blocks.map((b: { id: string }) => b.id),
      ids.slice(1),
    )
    assert.equal(last.body.blocks_before, 1)
    const first = last.body.blocks[0].position
    const earlier = await call('GET', `/v1/sessions/${sid}?limit=2&before=${first}`)
    assert.deepEqual(
      earlier.body.blocks.map((b: { id: string }) => b.id),
      ids.slice(0, 1),
    )
    assert.equal(earlier.body.blocks_before, 0)
  })

  test("each page carries its own blocks' attachments, no other block's", async () => {
    const names = (body: { blocks: { attachments: { name: string }[] }[] }) =>
      body.blocks.map((b) => b.attachments.map((a) => a.name))
    assert.deepEqual(names((await call('GET', `/v1/sessions/${sid}`)).body), [
      ['one.txt'],
      [],
      ['three.txt', 'four.txt'],
    ])
    const last = await call('GET', `/v1/sessions/${sid}?limit=1`)
    assert.deepEqual(names(last.body), [['three.txt', 'four.txt']])
    const middle = await call('GET', `/v1/sessions/${sid}?limit=1&before=${last.body.blocks[0].position}`)
    assert.deepEqual(names(middle.body), [[]])
    const first = await call('GET', `/v1/sessions/${sid}?limit=1&before=${middle.body.blocks[0].position}`)
    assert.deepEqual(names(first.body), [['one.txt']])
    const got = await call('GET', first.body.blocks[0].attachments[0].url)
    assert.equal(got.text, 'first')
  })

  test('a limit out of range is refused with the query error', async () => {
    for (const q of ['limit=0', 'limit=1001', 'before=-1', 'before=2147483648', 'limit=x']) {
      const r = await call('GET', `/v1/sessions/${sid}?${q}`)
      assert.equal(r.status, 400, `${q}: ${r.text}`)
      assert.equal(r.body.error.code, 'http.invalid-query', q)
    }
  })
})
