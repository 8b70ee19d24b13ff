// The HTTP benchmark behind `vis bench --http` (reported, never asserted on speed): its figures
// are this run's own measurements, the floor is the sum of its parts, the ratio is the medians
// divided, and the CLI prints the table.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { formatHttp, measureHttp } from '../../src/http/bench-http.js'
import { python, tempHome } from './helpers.js'

tempHome('http-bench')

test('one run measures the block, its floor and the concurrent load', async () => {
  const r = await measureHttp({ iterations: 200, python, concurrentSessions: 3, concurrentBlocks: 4 })
  for (const [key, value] of Object.entries(r)) {
    if (typeof value === 'number') assert.ok(Number.isFinite(value) && value > 0, `${key} = ${value}`)
  }
  assert.equal(r.iterations, 200)
  assert.equal(r.durability, 'full')
  for (const part of ['echo', 'exec', 'fsync', 'floor', 'block'] as const) {
    assert.ok(r[`${part}_p99_us`] >= r[`${part}_p50_us`], part)
  }
  assert.ok(Math.abs(r.floor_p50_us - (r.echo_p50_us + r.exec_p50_us + r.fsync_p50_us)) < 0.5)
  assert.ok(Math.abs(r.block_ratio - r.block_p50_us / r.floor_p50_us) < 0.02)
  assert.ok(r.concurrent_p99_ms >= r.concurrent_p50_ms)
  const table = formatHttp(r)
  assert.match(
    table,
    new RegExp(`block ratio to floor \\(p50\\)\\s+${r.block_ratio}×  target ≤ 1\\.5×  (met|missed)`),
  )
  assert.match(table, /3 sessions × 4 blocks at once\s+[\d.]+ blocks\/s/)
  for (const line of table.split('\n').filter((l) => /p50/.test(l) && !/ratio/.test(l))) {
    assert.match(line, /p50 \/ p99/)
  }
})
