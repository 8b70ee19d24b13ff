// 20 clients, each with its own session, all at once against one server with a small pool.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startServer, type VisServer } from '../../src/http/server.js'
import { client, python, tempHome } from './helpers.js'

const { home, root } = tempHome('http-concurrency')
const CLIENTS = 20

let server: VisServer
before(async () => {
  server = await startServer({ home, python, port: 0, pool: { size: 2 } })
})
after(async () => {
  await server.close()
})

test('20 concurrent clients on 20 sessions each see only their own state', async () => {
  const call = client(server.url)
  const results = await Promise.all(
    Array.from({ length: CLIENTS }, async (_, i) => {
      const created = await call('POST', '/v1/sessions', { roots: [root], title: `client ${i}` })
      assert.equal(created.status, 201, created.text)
      const id = created.body.id as string
      const blocks = `/v1/sessions/${id}/blocks`
      const set = await call('POST', blocks, {
        code: `mine = ${i}\nprint("client", mine)`,
        timeout_ms: 60_000,
      })
      assert.equal(set.body.stdout, `client ${i}\n`)
      const again = await call('POST', blocks, { code: 'mine * 100', timeout_ms: 60_000 })
      const events = await call('GET', `/v1/sessions/${id}`)
      const closed = await call('DELETE', `/v1/sessions/${id}`)
      return { id, value: again.body.result, blocks: events.body.blocks.length, closed: closed.body.state }
    }),
  )
  assert.equal(new Set(results.map((r) => r.id)).size, CLIENTS)
  results.forEach((r, i) => {
    assert.equal(r.value, i * 100, `client ${i} saw its own globals`)
    assert.equal(r.blocks, 2)
    assert.equal(r.closed, 'closed')
  })
  const metrics = (await call('GET', '/metrics')).text
  assert.match(metrics, new RegExp(`^vis_blocks_total\\{outcome="ok"\\} ${CLIENTS * 2}$`, 'm'))
  assert.match(metrics, new RegExp(`^vis_sessions_created_total ${CLIENTS}$`, 'm'))
  assert.match(metrics, /^vis_sessions 0$/m)
  assert.match(metrics, /^vis_pool_size 2$/m)
})
