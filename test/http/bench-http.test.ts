// The HTTP benchmark behind `vis bench --http` (reported, never asserted on speed): its figures
// are this run's own measurements, the floor is the sum of its parts, the ratio is the medians
// divided, and the CLI prints the table.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { test } from 'node:test'
import { formatHttp, measureHttp } from '../../src/bench/http.js'
import { python, tempHome } from './helpers.js'

const { home } = tempHome('http-bench')
const vis = join(import.meta.dirname, 'fixtures', 'vis.ts')
const cli = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', vis, 'bench', '--http', ...args], {
    env: { ...process.env, VIS_HOME: home },
    encoding: 'utf8',
    timeout: 300_000,
  })

test('one run measures the block, its floor and the concurrent load', async () => {
  const r = await measureHttp({
    iterations: 200,
    warmup: 30,
    python,
    concurrentSessions: 3,
    concurrentBlocks: 4,
  })
  for (const [key, value] of Object.entries(r)) {
    // What the target leaves is negative when the target is below what the machine allows.
    if (typeof value === 'number' && key !== 'target_room_us')
      assert.ok(Number.isFinite(value) && value > 0, `${key} = ${value}`)
  }
  assert.equal(r.iterations, 200)
  assert.equal(r.warmup, 30)
  assert.equal(r.durability, 'full')
  for (const part of ['echo', 'exec', 'gap_exec', 'fsync', 'floor', 'block'] as const) {
    assert.ok(r[`${part}_p99_us`] >= r[`${part}_p50_us`], part)
  }
  assert.ok(Math.abs(r.floor_p50_us - (r.echo_p50_us + r.exec_p50_us + r.fsync_p50_us)) < 0.5)
  assert.ok(Math.abs(r.block_ratio - r.block_p50_us / r.floor_p50_us) < 0.02)
  // The informational ratio swaps the floor's back-to-back exec for the exec after a gap.
  const gapFloor = r.echo_p50_us + r.gap_exec_p50_us + r.fsync_p50_us
  assert.ok(Math.abs(r.gap_floor_ratio - r.block_p50_us / gapFloor) < 0.02)
  // The least a durable block costs is that sum; the target's room is 1.5× the floor minus it.
  assert.ok(Math.abs(r.least_p50_us - gapFloor) < 0.5)
  assert.ok(Math.abs(r.least_ratio - gapFloor / r.floor_p50_us) < 0.02)
  assert.ok(Math.abs(r.target_room_us - (1.5 * r.floor_p50_us - gapFloor)) < 1)
  assert.ok(r.concurrent_p99_ms >= r.concurrent_p50_ms)
  const table = formatHttp(r)
  assert.match(table, /\(200 blocks after 30 to warm up, durability full\)/)
  assert.match(
    table,
    new RegExp(`block ratio to floor \\(p50\\)\\s+${r.block_ratio}×  target ≤ 1\\.5×  (met|missed)`),
  )
  assert.match(table, /3 sessions × 4 blocks at once\s+[\d.]+ blocks\/s/)
  assert.match(
    table,
    new RegExp(`block ratio to the floor with that exec instead \\(p50\\)\\s+${r.gap_floor_ratio}×`),
  )
  assert.match(
    table,
    new RegExp(
      `the least a durable block costs here \\(p50\\)\\s+${r.least_p50_us} µs = ${r.least_ratio}× the floor; the target leaves ${r.target_room_us} µs for the rest`,
    ),
  )
  for (const line of table.split('\n').filter((l) => /p50/.test(l) && !/ratio|least/.test(l))) {
    assert.match(line, /p50 \/ p99/)
  }
})

test('vis bench --http takes the warm-up it is given, and refuses one that is not a count', () => {
  for (const bad of ['-1', '1.5', 'lots']) {
    const r = cli('--warmup', bad)
    assert.equal(r.status, 2, r.stderr)
    assert.match(r.stderr, /--warmup takes a whole number of blocks \(0 or more\)/)
  }
  const args = ['--iterations', '100', '--warmup', '7', '--json']
  const r = cli(...args, ...(python ? ['--python', python] : []))
  assert.equal(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout) as { warmup: number; iterations: number; block_ratio: number }
  assert.equal(out.warmup, 7)
  assert.ok(out.iterations >= 100, `${out.iterations} blocks measured`)
  assert.ok(out.block_ratio > 0)
})
