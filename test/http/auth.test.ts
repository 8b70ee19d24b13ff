// Loopback needs no token; any other address needs VIS_TOKEN, or nothing starts.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { isLoopbackHost } from '../../src/http/auth.js'
import { startServer } from '../../src/http/server.js'
import { isVisError } from '../../src/util/errors.js'
import { client, python, tempHome } from './helpers.js'

const { home } = tempHome('http-auth')
const TOKEN = 'a-long-enough-test-token-0123456789'

test('a non-loopback bind without a token refuses to start, before anything is opened', async () => {
  const saved = process.env.VIS_TOKEN
  delete process.env.VIS_TOKEN
  try {
    await assert.rejects(startServer({ home, python, host: '0.0.0.0', port: 0 }), (e) =>
      isVisError(e, 'http.token-required'),
    )
    await assert.rejects(startServer({ home, python, host: '0.0.0.0', port: 0, token: 'short' }), (e) =>
      isVisError(e, 'http.token-weak'),
    )
  } finally {
    if (saved !== undefined) process.env.VIS_TOKEN = saved
  }
  assert.equal(existsSync(join(home, 'vis.db')), false, 'no database was opened')

  const vis = join(import.meta.dirname, 'fixtures', 'vis.ts')
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', vis, 'serve', '--host', '0.0.0.0', '--port', '0'],
    {
      env: { ...process.env, VIS_HOME: home, VIS_TOKEN: '' },
      encoding: 'utf8',
      timeout: 60_000,
    },
  )
  assert.equal(r.status, 1)
  assert.match(r.stderr, /set VIS_TOKEN/)
  assert.equal(r.stdout, '', 'no URL was printed')
})

test('with a token, every route but health needs the bearer', async () => {
  const server = await startServer({
    home,
    python,
    host: '0.0.0.0',
    port: 0,
    pool: { size: 0 },
    token: TOKEN,
  })
  try {
    const base = `http://127.0.0.1:${server.port}`
    const anon = client(base)
    const wrong = client(base, { authorization: 'Bearer not-the-token-at-all' })
    const right = client(base, { authorization: `Bearer ${TOKEN}` })
    const denied = await anon('GET', '/v1/sessions')
    assert.equal(denied.status, 401)
    assert.equal(denied.body.error.code, 'http.unauthorized')
    assert.match(denied.headers.get('www-authenticate') ?? '', /^Bearer/)
    assert.equal((await wrong('POST', '/v1/sessions', {})).status, 401)
    assert.equal((await anon('GET', '/metrics')).status, 401)
    assert.equal((await anon('GET', '/v1/health')).status, 200)
    assert.equal((await right('GET', '/v1/sessions')).status, 200)
    const doc = (await right('GET', '/v1/openapi.json')).body
    assert.deepEqual(doc.security, [{ bearer: [] }, { token: [] }])
  } finally {
    await server.close()
  }
})

test('what counts as loopback', () => {
  for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1']) {
    assert.equal(isLoopbackHost(h), true, h)
  }
  for (const h of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', 'example.com', '128.0.0.1']) {
    assert.equal(isLoopbackHost(h), false, h)
  }
})
