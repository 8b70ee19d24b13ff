// The synchronous PostgreSQL driver under the conditions of the reported lost reply (2 of ~8
// runs of bench/cluster.js): thousands of back-to-back queries, tiny and large results (the
// large ones make the worker allocate and collect), and spinning threads that oversubscribe the
// CPUs so the driver's worker is descheduled between posting a reply and notifying. Every reply
// must be the answer to its own query: each echoes the query's number and a payload of the
// requested size, so a dropped or misaligned reply fails the assertion, and a lost one throws
// db.connection-lost. The race itself is made deterministic in reply-wait.test.ts; this test is
// the real-server check that nothing else loses or shifts a reply.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Worker } from 'node:worker_threads'
import { PgDatabase } from '../../src/persistence/postgres/database.js'
import { freshDatabaseUrl } from '../helpers/postgres.js'

const QUERIES = 4000
// Spinners run until told to stop through the shared flag (no timers).
const SPIN = `
const { workerData } = require('node:worker_threads')
const stop = new Int32Array(workerData)
let x = 0
while (Atomics.load(stop, 0) === 0) x = (x * 31 + 7) | 0
`

test('every reply answers its own query under CPU contention and large results', () => {
  const db = new PgDatabase(freshDatabaseUrl())
  const stop = new Int32Array(new SharedArrayBuffer(4))
  const spinners = [0, 1, 2].map(() => new Worker(SPIN, { eval: true, workerData: stop.buffer }))
  try {
    const echo = db.prepare("SELECT ?::int AS n, repeat('x', ?::int) AS pad")
    const before = db.client.requests
    for (let n = 1; n <= QUERIES; n++) {
      // Mostly point-query sized, every 50th around 1 MiB so the worker's heap churns.
      const size = n % 50 === 0 ? 1_000_000 + n : n % 97
      const row = echo.get(n, size) as { n: number; pad: string }
      assert.equal(row.n, n, `reply to query ${n}`)
      assert.equal(row.pad.length, size, `payload of query ${n}`)
    }
    assert.equal(db.client.requests - before, QUERIES)
    // A failing statement between good ones must not shift the next reply either.
    assert.throws(() => db.prepare('SELECT 1/0').get(), /db\.query-failed|division by zero/)
    assert.equal((echo.get(QUERIES + 1, 3) as { n: number }).n, QUERIES + 1)
  } finally {
    Atomics.store(stop, 0, 1)
    for (const s of spinners) void s.terminate()
    db.close()
  }
})
