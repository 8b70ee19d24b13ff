// A chart drawn in a block comes back through the HTTP API: the block view lists it as an
// image/png attachment and its URL serves the PNG.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startServer, type VisServer } from '../../src/http/server.js'
import { client, tempHome } from '../http/helpers.js'
import { batteriesTree } from './helpers.js'

const { home, root } = tempHome('batteries-http')
let server: VisServer
let call: ReturnType<typeof client>

before(async () => {
  process.env.VIS_PYTHON_HOME = await batteriesTree()
  server = await startServer({ home, port: 0, pool: { size: 0 } })
  call = client(server.url)
})
after(async () => {
  await server?.close()
})

test('plt.show() in a block is an image/png attachment of the block view', async () => {
  const s = await call('POST', '/v1/sessions', { roots: [root] })
  assert.equal(s.status, 201, s.text)
  const r = await call('POST', `/v1/sessions/${s.body.id}/blocks`, {
    code: 'import matplotlib.pyplot as plt\nplt.figure(figsize=(3, 2), dpi=40)\nplt.plot([1, 4, 9])\nplt.show()\nprint("drawn")',
    timeout_ms: 120_000,
  })
  assert.equal(r.status, 200, r.text)
  assert.equal(r.body.stdout, 'drawn\n')
  assert.equal(r.body.attachments.length, 1)
  const att = r.body.attachments[0]
  assert.equal(att.name, 'figure-1.png')
  assert.equal(att.media_type ?? att.mediaType, 'image/png')
  const png = await fetch(server.url + att.url)
  assert.equal(png.status, 200)
  assert.equal(png.headers.get('content-type'), 'image/png')
  const bytes = Buffer.from(await png.arrayBuffer())
  assert.equal(bytes.subarray(1, 4).toString(), 'PNG')
  assert.deepEqual([bytes.readUInt32BE(16), bytes.readUInt32BE(20)], [120, 80])
  const view = await call('GET', `/v1/sessions/${s.body.id}`)
  assert.equal(view.body.blocks.at(-1).attachments[0].id, att.id)
})
