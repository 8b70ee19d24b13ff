// A session's mode over HTTP (issue 32 §3): POST /v1/sessions takes `mode`, the session view
// shows it, and a read-only session's block cannot write its root while a workspace one can.
// An unknown mode is the client's mistake (400), never a 500.
import assert from 'node:assert/strict'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { startServer, type VisServer } from '../../src/http/server.js'
import { client, python, tempHome } from './helpers.js'

const { home, root } = tempHome('http-modes')
let server: VisServer
let call: ReturnType<typeof client>
before(async () => {
  writeFileSync(join(root, 'notes.txt'), 'original\n')
  server = await startServer({ home, python, port: 0, pool: { size: 0 } })
  call = client(server.url)
})
after(async () => {
  await server.close()
})

const WRITE = `try:
    open('notes.txt', 'w').write('changed\\n')
    print('wrote')
except PermissionError as e:
    print('refused:', e)`

test('mode read-only over HTTP: shown in the view, the block refused, the root unchanged', async () => {
  const created = await call('POST', '/v1/sessions', { roots: [root], mode: 'read-only' })
  assert.equal(created.status, 201, created.text)
  assert.equal(created.body.policy.mode, 'read-only')
  const id = created.body.id
  const r = await call('POST', `/v1/sessions/${id}/blocks`, { code: WRITE })
  assert.equal(r.status, 200, r.text)
  assert.match(r.body.stdout, /^refused: vis: writing 'notes\.txt' .*the session is read-only/)
  assert.equal(readFileSync(join(root, 'notes.txt'), 'utf8'), 'original\n')
  // A write tool call from the block is refused with its code.
  const t = await call('POST', `/v1/sessions/${id}/blocks`, {
    code: "try:\n    await write('made.txt', 'x')\nexcept Exception as e:\n    print(e.code)",
  })
  assert.equal(t.body.stdout.trim(), 'tool.session-read-only')
  assert.equal(existsSync(join(root, 'made.txt')), false)
})

test('a workspace session (no mode) still writes; an unknown mode is a 400', async () => {
  const created = await call('POST', '/v1/sessions', { roots: [root] })
  assert.equal(created.status, 201, created.text)
  assert.equal(created.body.policy.mode, undefined)
  const r = await call('POST', `/v1/sessions/${created.body.id}/blocks`, { code: WRITE })
  assert.equal(r.body.stdout.trim(), 'wrote')
  assert.equal(readFileSync(join(root, 'notes.txt'), 'utf8'), 'changed\n')
  const bad = await call('POST', '/v1/sessions', { roots: [root], mode: 'yolo' })
  assert.equal(bad.status, 400, bad.text)
})
