// The round-trip benchmark behind `vis bench` (reported, never asserted on speed): its
// figures must be real measurements of this run, and it must leave the host as it was.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { formatRoundtrip, measureRoundtrip } from '../../src/bench/roundtrip.js'

const home = mkdtempSync(join(tmpdir(), 'vis-bench-home-'))
process.on('exit', () => rmSync(home, { recursive: true, force: true }))

const allowed = () => /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]

test('one run measures every figure against its own baseline and restores the host CPU set', async () => {
  const before = allowed()
  // A companion (how bench/peers.js races the Python peers): a real process of its own, asked to
  // measure after every cold start and every round, and placed with the peers.
  const companion = spawn('sleep', ['600'], { stdio: 'ignore' })
  const calls = { cold: 0, warm: 0, rounds: 0, bigBatches: new Set<number>(), placed: new Set<string>() }
  const placement = () =>
    /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync(`/proc/${companion.pid}/status`, 'utf8'))?.[1]
  let r: Awaited<ReturnType<typeof measureRoundtrip>>
  try {
    r = await measureRoundtrip({
      iterations: 200,
      home,
      python: process.env.VIS_PYTHON_VERSION,
      companions: [
        {
          pids: () => [companion.pid!],
          cold: async () => {
            calls.cold += 1
          },
          warm: async () => {
            calls.warm += 1
          },
          round: async (batch, bigBatch, big) => {
            calls.rounds += 1
            assert.ok(batch >= 10 && bigBatch >= 5 && big.length === 64 * 1024)
            calls.placed.add(placement() ?? '?')
          },
        },
      ],
    })
  } finally {
    companion.kill('SIGKILL')
  }
  assert.deepEqual([calls.cold, calls.warm, calls.rounds], [5, 1, 40])
  if (r.pinned) assert.deepEqual([...calls.placed], ['1'], 'the companion runs where the peers run')
  assert.ok(
    r.idle_session_pss_mb > 0 && r.idle_session_pss_mb <= r.idle_session_rss_mb,
    `${r.idle_session_pss_mb}`,
  )
  assert.equal(allowed(), before, 'the host runs on all its CPUs again')
  assert.equal(r.pinned, availableParallelism() >= 2)
  for (const key of [
    'floor_p50_us',
    'exec_p50_us',
    'hostcall_p50_us',
    'floor64k_p50_us',
    'payload64k_p50_us',
    'pool_acquire_p50_ms',
    'cold_create_p50_ms',
    'idle_session_rss_mb',
    'idle_session_private_mb',
    'idle_session_pss_mb',
  ] as const) {
    assert.ok(Number.isFinite(r[key]) && r[key] > 0, `${key} = ${r[key]}`)
  }
  // Ratios are the run's own medians divided, not constants.
  assert.ok(Math.abs(r.exec_ratio - r.exec_p50_us / r.floor_p50_us) < 0.02)
  assert.ok(Math.abs(r.payload64k_ratio - r.payload64k_p50_us / r.floor64k_p50_us) < 0.02)
  // A tail ratio is the row's own p99 over its own p50.
  for (const [tail, p99, p50] of [
    [r.floor_tail_ratio, r.floor_p99_us, r.floor_p50_us],
    [r.exec_tail_ratio, r.exec_p99_us, r.exec_p50_us],
    [r.hostcall_tail_ratio, r.hostcall_p99_us, r.hostcall_p50_us],
  ] as const) {
    // p99 and p50 are rounded to 0.1 µs before they are divided here: a relative tolerance.
    assert.ok(tail >= 1 && Math.abs(tail - p99 / p50) <= 0.01 * tail + 0.01, `${tail} = ${p99} / ${p50}`)
  }
  assert.ok(r.idle_session_private_mb < r.idle_session_rss_mb)
  // The tails' run-queue attribution: at least the host's thread and the worker's interpreter
  // thread are read; a tail without its waits is never longer than with them; shares are shares.
  assert.ok(r.runqueue_threads >= 2, `runqueue_threads = ${r.runqueue_threads}`)
  for (const [oncpu, p99] of [
    [r.floor_p99_oncpu_us, r.floor_p99_us],
    [r.exec_p99_oncpu_us, r.exec_p99_us],
    [r.hostcall_p99_oncpu_us, r.hostcall_env_p99_us],
  ] as const) {
    assert.ok(oncpu >= 0 && oncpu <= p99, `${oncpu} <= ${p99}`)
  }
  for (const share of [r.floor_tail_waited, r.exec_tail_waited, r.hostcall_tail_waited]) {
    assert.ok(share >= 0 && share <= 1, `share ${share}`)
  }
  // Every p50 has its p99 beside it, in the result and in the table.
  for (const key of Object.keys(r).filter((k) => k.endsWith('_p50_us') || k.endsWith('_p50_ms'))) {
    const p99 = key.replace('_p50_', '_p99_') as keyof typeof r
    assert.ok((r[p99] as number) >= (r[key as keyof typeof r] as number), `${p99} beside ${key}`)
  }
  const table = formatRoundtrip(r)
  for (const line of table.split('\n').filter((l) => /p50/.test(l))) assert.match(line, /p50 \/ p99/)
  assert.match(table, new RegExp(`exec ratio to floor\\s+${r.exec_ratio}×\\s+target ≤ 1\\.2  (met|missed)`))
  assert.match(
    table,
    new RegExp(`tail, exec: its p99 ÷ its median\\s+${r.exec_tail_ratio}×\\s+target ≤ 3  (met|missed)`),
  )
  assert.match(table, r.pinned ? /pinned to separate CPUs/ : /unpinned/)

  const free = await measureRoundtrip({
    iterations: 100,
    home,
    python: process.env.VIS_PYTHON_VERSION,
    pin: false,
  })
  assert.equal(free.pinned, false)
  assert.equal(allowed(), before)
})
