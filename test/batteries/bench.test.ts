// The batteries benchmark (reported, never judged): its figures are this run's own
// measurements of the set against a lean copy of the same tree.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { formatBatteries, measureBatteries } from '../../src/bench/batteries.js'
import { tempHome } from '../sessions/helpers.js'
import { batteriesTree } from './helpers.js'

tempHome('batteries-bench')

test('cold start, idle RSS and first imports are measured for both trees', async () => {
  const r = await measureBatteries(await batteriesTree(), { rounds: 1, sessions: 2 })
  assert.ok(r.packages >= 30, `${r.packages} packages`)
  for (const t of [r.lean, r.full]) {
    assert.ok(t.cold_create_p50_ms > 0 && Number.isFinite(t.cold_create_p50_ms))
    assert.ok(t.idle_session_rss_mb > 10 && Number.isFinite(t.idle_session_rss_mb))
    assert.ok(t.cold_create_min_ms > 0 && t.cold_create_min_ms <= t.cold_create_p50_ms)
    // A start runs a whole interpreter and the jail: well over a few ms of CPU.
    assert.ok(t.cold_create_cpu_ms > 20 && Number.isFinite(t.cold_create_cpu_ms), `${t.cold_create_cpu_ms}`)
  }
  assert.deepEqual(Object.keys(r.lean.first_import_ms), [])
  assert.deepEqual(Object.keys(r.full.first_import_ms), [
    'numpy',
    'pandas',
    'matplotlib.pyplot',
    'PIL.Image',
    'requests',
  ])
  for (const [m, ms] of Object.entries(r.full.first_import_ms)) {
    assert.ok(ms > 0, m)
    assert.ok(r.full.first_import_cpu_ms[m]! > 0, `${m} CPU`)
  }
  // The ratios are the two trees' own figures divided.
  assert.ok(Math.abs(r.idle_rss_ratio - r.full.idle_session_rss_mb / r.lean.idle_session_rss_mb) < 0.01)
  assert.ok(Math.abs(r.cold_cpu_ratio - r.full.cold_create_cpu_ms / r.lean.cold_create_cpu_ms) < 0.01)
  assert.ok(Math.abs(r.cold_min_ratio - r.full.cold_create_min_ms / r.lean.cold_create_min_ms) < 0.01)
  assert.match(
    formatBatteries(r),
    /cold session start, CPU {3}lean [\d.]+ ms {3}with set [\d.]+ ms {3}ratio [\d.]+×/,
  )
  assert.match(formatBatteries(r), /first import in a session:\n {2}numpy {16}[\d.]+ ms \(CPU [\d.]+ ms\)/)
})
