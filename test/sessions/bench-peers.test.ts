// bench/peers.js (issue 34), reported and never asserted on speed: one run prints every ratio of
// the issue from figures of that same run, the peers really answered, and the load is beside it.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { test } from 'node:test'

const repo = join(import.meta.dirname, '..', '..')

test('one quick run races both Python peers, MCP over stdio and the agent loop, ratios from its own figures', () => {
  const args = ['--import', 'tsx', join(repo, 'bench', 'peers.js'), '--quick', '--json']
  if (process.env.VIS_PYTHON_VERSION) args.push('--python', process.env.VIS_PYTHON_VERSION)
  const run = spawnSync(process.execPath, args, { cwd: repo, encoding: 'utf8', timeout: 600_000 })
  assert.equal(run.status, 0, run.stderr.slice(-2000))
  const r = JSON.parse(run.stdout.trim().split('\n').pop() ?? '')
  for (const k of ['start', 'after_roundtrips', 'after_http_mcp', 'end']) {
    assert.ok(Number.isFinite(r.load_average_1m[k]), `load ${k}`)
  }
  for (const row of ['exec', 'hostcall', 'payload64k']) {
    for (const who of ['vis', 'python_shell', 'python_worker']) {
      const { p50, p99 } = r[row][who]
      assert.ok(p50 > 0 && p99 >= p50, `${row} ${who}: ${p50} / ${p99}`)
    }
  }
  assert.ok(r.cold_start_ms.python3_spawn_to_reply > 0 && r.cold_start_ms.vis > 0)
  // The same-run peers of the cold start and the idle memory: a bare node, vis without the jail.
  assert.ok(r.cold_start_ms.node_spawn_to_reply > 0 && r.cold_start_ms.vis_unconfined > 0)
  assert.ok(r.idle_session_mb.bare_node_rss > 0 && r.idle_session_mb.unconfined_rss > 0)
  assert.ok(r.idle_session_mb.pss > 0 && r.idle_session_mb.pss <= r.idle_session_mb.rss)
  assert.ok(r.mcp_stdio_us.p50 > 0 && r.mcp_stdio_us.p99 >= r.mcp_stdio_us.p50)
  assert.ok(r.http_block_us.p50 > 0)
  assert.ok(r.agent_loop_ms.sdk_direct_p50 > 0 && r.agent_loop_ms.block_p50 > 0)

  // Every ratio is this run's figures divided (they are rounded before the division here).
  const byName = new Map(r.targets.map((t: { name: string; value: number }) => [t.name, t.value]))
  const near = (name: string, expected: number) => {
    const v = byName.get(name) as number
    assert.ok(Math.abs(v - expected) <= 0.02 * Math.abs(expected) + 0.02, `${name}: ${v} vs ${expected}`)
  }
  near('exec p50 ÷ python-shell p50', r.exec.vis.p50 / r.exec.python_shell.p50)
  near('exec p99 ÷ python-shell p99', r.exec.vis.p99 / r.exec.python_shell.p99)
  near('host call p50 ÷ python-shell p50', r.hostcall.vis.p50 / r.hostcall.python_shell.p50)
  near('64 KiB p50 ÷ python-shell p50', r.payload64k.vis.p50 / r.payload64k.python_shell.p50)
  near(
    'cold start ÷ python3 spawn to first reply',
    r.cold_start_ms.vis / r.cold_start_ms.python3_spawn_to_reply,
  )
  near('MCP stdio p50 ÷ HTTP block p50', r.mcp_stdio_us.p50 / r.http_block_us.p50)
  near('MCP stdio p99 ÷ its p50', r.mcp_stdio_us.p99 / r.mcp_stdio_us.p50)
  near('agent loop over block + SDK, wall p50 (ms)', r.agent_loop_ms.vs_sdk_wall_p50)
  // The HTTP block's re-aimed targets (issue 34): against the least a durable block costs, and CPU.
  near('HTTP block p50 ÷ least durable block p50', r.http_block_us.p50 / r.http_block_least_us)
  assert.equal(byName.get('HTTP block host CPU per block (µs)'), r.http_block_cpu_us.block)
  for (const t of r.targets) assert.equal(t.met, t.value <= t.limit, t.name)
  assert.equal(r.targets.length, 15)
})
