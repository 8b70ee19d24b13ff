// timeout_ms over HTTP is the same hard bound (issue 13): a block that ignores its interrupt is
// answered as a timeout well before the wall clock, the session goes on in a fresh worker, and
// the survived report is stored with the block, shown in the block view, in `vis sessions show`
// and to the next block as session['survived'].
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { startServer, type VisServer } from '../../src/http/server.js'
import { client, finishedFor, openEvents, python, tempHome } from './helpers.js'

const { home, root } = tempHome('http-deadline')
const vis = join(import.meta.dirname, 'fixtures', 'vis.ts')

let server: VisServer
let call: ReturnType<typeof client>
before(async () => {
  server = await startServer({ home, python, port: 0, pool: { size: 1 }, heartbeatMs: 100 })
  call = client(server.url)
})
after(async () => {
  await server?.close()
})

test('a block that ignores its interrupt over HTTP: timed out, worker replaced, survived stored and shown', async (t) => {
  const created = await call('POST', '/v1/sessions', { roots: [root] })
  assert.equal(created.status, 201, created.text)
  const id = created.body.id as string
  const setup = await call('POST', `/v1/sessions/${id}/blocks`, {
    code: 'import json\nLIMIT = 7\ndef double(x):\n    return x * 2\nhandle = object()',
    timeout_ms: 30_000,
  })
  assert.equal(setup.body.error, null, setup.text)
  assert.equal(setup.body.survived, null, 'a block that finished has no report')

  const t0 = performance.now()
  const r = await call('POST', `/v1/sessions/${id}/blocks`, {
    code: 'import hashlib\nprint("hashing", flush=True)\nhashlib.pbkdf2_hmac("sha256", b"pw", b"salt", 10**9)',
    timeout_ms: 1000,
  })
  const ms = performance.now() - t0
  t.diagnostic(`answered ${Math.round(ms)} ms after it was sent (timeout_ms 1000)`)
  assert.equal(r.status, 200, r.text)
  assert.ok(ms < 1000 + 2000 + 20_000, `answered in ${ms} ms, far below the 300 s wall clock`)
  assert.equal(r.body.timed_out, true)
  assert.equal(r.body.stdout, 'hashing\n')
  assert.equal(r.body.error.code, 'block.timeout')
  assert.match(r.body.error.message, /did not stop within \d+ ms of being interrupted/)
  assert.deepEqual(r.body.survived, {
    cause: 'timeout',
    worker_replaced: true,
    intact: [],
    restored: ['json', 'LIMIT', 'double'],
    lost: ['handle'],
    cancelled: [],
  })

  // Stored with the block: the session view and the single block view agree.
  const detail = await call('GET', `/v1/sessions/${id}`)
  assert.equal(detail.body.worker, 'live')
  assert.equal(detail.body.blocks[1].id, r.body.id)
  assert.deepEqual(detail.body.blocks[1].survived, r.body.survived)

  // The session goes on; the model sees the report once.
  const next = await call('POST', `/v1/sessions/${id}/blocks`, {
    code: 'print(double(LIMIT), session["survived"]["lost"], session["survived"]["worker_replaced"])',
    timeout_ms: 30_000,
  })
  assert.equal(next.body.error, null, next.text)
  assert.equal(next.body.stdout, "14 ['handle'] True\n")

  // The replacement is an event (replayed from the start), and the finished block carries the report.
  const events = await openEvents(`${server.url}/v1/sessions/${id}/events?after=0`)
  await events.waitFor(finishedFor(r.body.id), 20_000, 'the timed-out block')
  await events.close()
  const replaced = events.events.filter((e) => e.event === 'worker.replaced')
  assert.equal(replaced.length, 1)
  assert.match(replaced[0]!.data.data.reason, /did not stop within/)
  const finished = events.events.find(
    (e) => e.event === 'block.finished' && e.data.data.block_id === r.body.id,
  )
  assert.deepEqual(finished?.data.data.survived, r.body.survived)
  assert.match((await call('GET', '/metrics')).text, /^vis_worker_restarts_total 1$/m)

  // The CLI reads the same database.
  const show = spawnSync(process.execPath, ['--import', 'tsx', vis, 'sessions', 'show', id], {
    env: { ...process.env, VIS_HOME: home },
    encoding: 'utf8',
    timeout: 60_000,
  })
  assert.equal(show.status, 0, show.stderr)
  assert.match(
    show.stdout,
    /survived: timeout, worker replaced; intact: -; restored: json, LIMIT, double; lost: handle; cancelled: -/,
  )
})

test('POST /interrupt on a block that swallows it: the block ends, its worker is replaced', async () => {
  const created = await call('POST', '/v1/sessions', { roots: [root] })
  const id = created.body.id as string
  await call('POST', `/v1/sessions/${id}/blocks`, { code: 'def triple(x):\n    return 3 * x' })
  const sse = await openEvents(`${server.url}/v1/sessions/${id}/events`)
  const sub = await call(
    'POST',
    `/v1/sessions/${id}/blocks`,
    {
      code: 'import time\nprint("stubborn", flush=True)\nwhile True:\n    try:\n        time.sleep(10)\n    except BaseException:\n        pass',
      timeout_ms: 120_000,
    },
    { prefer: 'respond-async' },
  )
  assert.equal(sub.status, 202)
  await sse.waitFor((evs) => evs.some((e) => e.event === 'output'), 20_000, 'the block to print')
  const ack = await call('POST', `/v1/sessions/${id}/interrupt`)
  assert.equal(ack.body.landed, true)
  assert.equal(ack.body.block_id, sub.body.id)
  await sse.waitFor(finishedFor(sub.body.id), 20_000, 'the interrupted block to finish')
  await sse.close()
  const block = (await call('GET', `/v1/sessions/${id}`)).body.blocks.find(
    (b: { id: string }) => b.id === sub.body.id,
  )
  assert.equal(block.error.code, 'block.interrupted')
  assert.equal(block.stdout, 'stubborn\n')
  assert.equal(block.survived.cause, 'interrupt')
  assert.equal(block.survived.worker_replaced, true)
  assert.deepEqual(block.survived.restored, ['triple'])
  const next = await call('POST', `/v1/sessions/${id}/blocks`, { code: 'print(triple(5))' })
  assert.equal(next.body.stdout, '15\n')
})
