// `vis serve` on PostgreSQL (issue 19), killed with SIGKILL while a block runs: every
// acknowledged block is in the database with its outcome, and another node (its own home, the
// same database) serves the session afterwards with its functions restored.
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { after, test } from 'node:test'
import { openStore } from '../../src/persistence/index.js'
import { freshDatabaseUrl } from '../helpers/postgres.js'
import { client, openEvents, python, spawnServe, tempHome } from './helpers.js'

const children: ChildProcess[] = []
after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
})

async function serveOn(databaseUrl: string) {
  const { home } = tempHome('http-pg-crash')
  const env = {
    ...process.env,
    VIS_HOME: home,
    VIS_TOKEN: 'a-test-token-of-enough-length',
    VIS_DATABASE_URL: databaseUrl,
    ...(python ? { VIS_PYTHON_VERSION: python } : {}),
  }
  const { child, out, err } = await spawnServe(['--pool', '1', ...(python ? ['--python', python] : [])], env)
  children.push(child)
  assert.equal(child.exitCode, null, `vis serve exited: ${err()}`)
  const url = /serving (http:\/\/\S+)/.exec(out())![1]!
  const auth = { authorization: 'Bearer a-test-token-of-enough-length' }
  return { child, url, auth, call: client(url, auth) }
}

test('SIGKILL of a node on PostgreSQL loses no acknowledged block; another node carries on', {
  timeout: 180_000,
}, async () => {
  const databaseUrl = freshDatabaseUrl()
  const first = await serveOn(databaseUrl)
  const sid = (await first.call('POST', '/v1/sessions', { title: 'pg' })).body.id as string
  const acknowledged: string[] = []
  for (const code of ['def inc(x):\n    return x + 1\nBASE = 40', 'inc(BASE)', 'print("three")']) {
    const r = await first.call('POST', `/v1/sessions/${sid}/blocks`, { code })
    assert.equal(r.status, 200, r.text)
    acknowledged.push(r.body.id)
  }
  const sse = await openEvents(`${first.url}/v1/sessions/${sid}/events`, first.auth)
  const slow = await first.call(
    'POST',
    `/v1/sessions/${sid}/blocks`,
    { code: 'import time\nprint("working", flush=True)\ntime.sleep(60)', timeout_ms: 60_000 },
    { Prefer: 'respond-async' },
  )
  assert.equal(slow.status, 202)
  await sse.waitFor((evs) => evs.some((e) => e.event === 'output'), 30_000, 'the slow block to print')
  await sse.close()
  first.child.kill('SIGKILL')
  await new Promise((resolve) => first.child.once('exit', resolve))

  const store = openStore({ home: tempHome('http-pg-check').home, databaseUrl })
  try {
    assert.deepEqual(store.integrityCheck(), ['ok'])
    const blocks = store.blocks.listBySession(sid)
    assert.deepEqual(
      blocks.slice(0, 3).map((b) => [b.id, b.status]),
      acknowledged.map((id) => [id, 'done']),
    )
    assert.equal(blocks[1]!.result, 41)
    assert.equal(blocks[2]!.stdout, 'three\n')
    // The block the node died in is still "running": closing it is the taking-over node's call.
    assert.deepEqual(
      blocks.slice(3).map((b) => [b.id, b.status]),
      [[slow.body.id, 'running']],
    )
    assert.equal(store.blocks.abandonRunningIn([sid], 'its node was killed').length, 1)
  } finally {
    store.close()
  }

  const second = await serveOn(databaseUrl)
  const again = await second.call('POST', `/v1/sessions/${sid}/blocks`, { code: 'inc(BASE) + 1' })
  assert.equal(again.status, 200, again.text)
  assert.equal(again.body.result, 42, JSON.stringify(again.body.error))
  assert.equal(again.body.position, 5)
  second.child.kill('SIGTERM')
})
