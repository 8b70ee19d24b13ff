import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import type { Socket } from 'node:net'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { encodeFrame } from '../protocol/framing.js'
import { createRuntime } from '../sessions/create-runtime.js'
import { packageRoot } from '../util/home.js'
import { hostProgramPath } from '../util/host-programs.js'
import { processTree, treePrivateMb, treePssMb, treeRssMb } from '../worker/proctree.js'
import { pythonHome } from '../worker/python-home.js'
import { RunQueueProbe, tailWaitShare, withoutWaits } from '../worker/runqueue.js'

// The round-trip benchmark behind `node bench/roundtrip.js` and `vis bench`. Every ratio
// divides by a baseline measured in the same run: a bare Node child answering JSON lines
// over the same kind of socketpair, so machine noise cancels out.

export type RoundtripResult = {
  python: string
  iterations: number
  // Whether the host and the peers ran pinned to separate CPUs (RoundtripOptions.pin).
  pinned: boolean
  floor_p50_us: number
  floor_p99_us: number
  exec_p50_us: number
  exec_p99_us: number
  exec_ratio: number
  hostcall_p50_us: number
  hostcall_p99_us: number
  hostcall_ratio: number
  // Each one's p99 divided by its own p50 (the tail target is ≤ 3 for exec and host
  // call); the floor's beside them says how long a tail this machine gives a bare round trip.
  floor_tail_ratio: number
  exec_tail_ratio: number
  hostcall_tail_ratio: number
  // The tails with each sample's run-queue wait (host, peer and worker threads on the path,
  // RunQueueProbe) taken out, and the share of the slowest 1% that mostly waited for a CPU.
  runqueue_threads: number
  floor_p99_oncpu_us: number
  floor_tail_waited: number
  exec_p99_oncpu_us: number
  exec_tail_waited: number
  hostcall_env_p50_us: number
  hostcall_env_p99_us: number
  hostcall_p99_oncpu_us: number
  hostcall_tail_waited: number
  floor64k_p50_us: number
  floor64k_p99_us: number
  payload64k_p50_us: number
  payload64k_p99_us: number
  payload64k_ratio: number
  pool_acquire_p50_ms: number
  pool_acquire_p99_ms: number
  cold_create_p50_ms: number
  cold_create_p99_ms: number
  idle_session_rss_mb: number
  // Private pages only: the binary and shared libraries mapped by every worker excluded.
  idle_session_private_mb: number
  // Proportional: shared pages divided among the processes that map them.
  idle_session_pss_mb: number
}

// Something measured beside the worker in the same run (bench/peers.js: the Python peers), in
// alternating batches so both see the same machine. Its processes are pinned with the peers.
export type RoundtripCompanion = {
  pids(): number[]
  // Once per cold session start, right after it.
  cold?(): Promise<void>
  // Before the measured rounds.
  warm?(): Promise<void>
  // Once per round, after the worker's batches: `batch` small requests, `bigBatch` 64 KiB ones.
  round(batch: number, bigBatch: number, big: string): Promise<void>
}

export type RoundtripOptions = {
  iterations?: number
  python?: string
  home?: string
  // Pin the host to one CPU and both peers (the floor's and the worker) to another, so
  // the two are measured under the same placement (default: on when there are 2+ CPUs).
  pin?: boolean
  companions?: RoundtripCompanion[]
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN
}
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d

type FloorPeer = {
  pid: number
  // Round trip times; with a probe, each one's run-queue wait goes into `waits`.
  ping(n: number, payload: unknown, probe?: RunQueueProbe, waits?: number[]): Promise<number[]>
  close(): void
}

// A minimal JSON-line client for the floor peer (no zod, no channel: the baseline).
function startFloorPeer(): FloorPeer {
  const here = import.meta.url
  const ts = here.endsWith('.ts')
  const entry = fileURLToPath(new URL(`../worker/floor-peer.${ts ? 'ts' : 'js'}`, here))
  const child: ChildProcess = spawn(
    process.execPath,
    [...(ts ? ['--import', import.meta.resolve('tsx')] : []), entry],
    {
      cwd: packageRoot,
      env: { ...process.env, NODE_OPTIONS: '' },
      stdio: ['ignore', 'inherit', 'inherit', 'pipe'],
    },
  )
  const sock = child.stdio[3] as Socket
  sock.setEncoding('utf8')
  let buf = ''
  let waiter: ((line: string) => void) | undefined
  sock.on('data', (chunk: string) => {
    buf += chunk
    const nl = buf.indexOf('\n')
    if (nl >= 0 && waiter) {
      const line = buf.slice(0, nl)
      buf = buf.slice(nl + 1)
      const w = waiter
      waiter = undefined
      w(line)
    }
  })
  let id = 0
  return {
    async ping(n, payload, probe, waits) {
      const times: number[] = []
      for (let i = 0; i < n; i++) {
        const w0 = probe?.waitedUs() ?? 0
        const t0 = performance.now()
        const line = await new Promise<string>((resolve) => {
          waiter = resolve
          sock.write(encodeFrame({ id: ++id, op: 'ping', value: payload }))
        })
        JSON.parse(line)
        times.push((performance.now() - t0) * 1000)
        if (probe) waits?.push(probe.waitedUs() - w0)
      }
      return times
    },
    pid: child.pid!,
    close: () => child.kill('SIGKILL'),
  }
}

// Times each host call from Python (a fixed benchmark program; nothing is interpolated).
const HOSTCALL_LOOP = [
  'import _vis, time',
  'def _vis_bench_hostcalls(n):',
  '    out = []',
  '    for _ in range(n):',
  '        t = time.perf_counter_ns()',
  '        _vis.host_call("ping", "[]")',
  '        out.append(time.perf_counter_ns() - t)',
  '    return out',
].join('\n')

// Every thread of pid onto one CPU (taskset from util-linux); false when that failed.
function pin(pid: number, cpu: number | string): boolean {
  const taskset = hostProgramPath('taskset')
  if (!taskset) return false
  const r = spawnSync(taskset, ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' })
  return r.status === 0
}

export async function measureRoundtrip(opts: RoundtripOptions = {}): Promise<RoundtripResult> {
  const n = opts.iterations ?? 2000
  // Unpinned, a 2-vCPU VM places the floor's two ends on one vCPU for part of a run (a
  // 15-30 us round trip) and on two for the rest (55-90 us): its median jumps between
  // runs while the worker's barely moves. Pinned, both are measured split, every run.
  const cpus = availableParallelism()
  const pinning = (opts.pin ?? true) && cpus >= 2
  let pinned = false
  const home = opts.home ?? mkdtempSync(join(tmpdir(), 'vis-bench-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-bench-root-'))
  const big = 'x'.repeat(64 * 1024)
  const companions = opts.companions ?? []

  const rt = await createRuntime({ home, python: opts.python, pool: { size: 1 } })
  let peer: FloorPeer | undefined
  try {
    // Cold: a runtime without a pool starts a worker per session.
    const coldRt = await createRuntime({ home, python: opts.python, pool: { size: 0 } })
    const cold: number[] = []
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now()
      const s = await coldRt.createSession({ roots: [root] })
      cold.push(performance.now() - t0)
      await s.dispose()
      for (const c of companions) await c.cold?.()
    }
    await coldRt.close()

    // Warm: the pool has a worker for this policy ready before each session is created.
    await (await rt.createSession({ roots: [root] })).dispose()
    const acquire: number[] = []
    for (let i = 0; i < 10; i++) {
      await rt.poolSettled()
      const t0 = performance.now()
      const s = await rt.createSession({ roots: [root] })
      acquire.push(performance.now() - t0)
      await s.dispose()
    }
    await rt.poolSettled()

    const s = await rt.createSession({ roots: [root] })
    // Idle: after one block, before the loops below grow any heap.
    await s.runBlock('n = 1')
    await new Promise((r) => setTimeout(r, 200))
    const idleRss = treeRssMb(s.pid)
    const idlePrivate = treePrivateMb(s.pid)
    const idlePss = treePssMb(s.pid)
    await s.bind('ping', () => 1, { doc: 'benchmark ping', signature: '()' })
    const loop = (await s.exec(HOSTCALL_LOOP)) as { ok: boolean; error?: unknown }
    if (!loop.ok) throw new Error(`the host-call loop did not compile: ${JSON.stringify(loop.error)}`)
    if ((await s.callModule('builtins', 'str', [big])) !== big) {
      throw new Error('the 64 KiB payload did not come back intact')
    }

    // The baseline and the worker are measured in alternating batches, so both see the
    // same machine: on 2 vCPUs a round trip costs ~2x more when the two ends land on
    // different vCPUs, and which one happens drifts during a run.
    const floor: number[] = []
    const floor64k: number[] = []
    const exec: number[] = []
    const payload: number[] = []
    const hostcall: number[] = []
    const rounds = 40
    const batch = Math.max(10, Math.floor(n / rounds))
    const bigBatch = Math.max(5, Math.floor(batch / 10))
    peer = startFloorPeer()
    if (pinning) {
      pinned = pin(process.pid, 0)
      const others = companions.flatMap((c) => c.pids().flatMap(processTree))
      for (const pid of [...processTree(peer.pid), ...processTree(s.pid), ...others])
        pinned = pin(pid, 1) && pinned
    }
    for (const c of companions) await c.warm?.()
    await peer.ping(50, null) // warm-up, both ends
    for (let i = 0; i < 50; i++) await s.exec('x = 1')
    // The threads on the paths: those whose run time moves during a short warm-up of each.
    const probe = await RunQueueProbe.busyThreads([peer.pid, s.pid], async () => {
      await peer!.ping(100, null)
      for (let i = 0; i < 100; i++) await s.exec('x = 1')
      await s.callModule('__main__', '_vis_bench_hostcalls', [100])
    })
    const floorWait: number[] = []
    const execWait: number[] = []
    const envelope: number[] = []
    const envelopeWait: number[] = []
    for (let r = 0; r < rounds; r++) {
      floor.push(...(await peer.ping(batch, null, probe, floorWait)))
      for (let i = 0; i < batch; i++) {
        const w0 = probe.waitedUs()
        const t0 = performance.now()
        await s.exec('x = 1')
        exec.push((performance.now() - t0) * 1000)
        execWait.push(probe.waitedUs() - w0)
      }
      // One host call per request, for its run-queue wait: timed from JS, so the time also
      // covers the request that makes the call (the envelope).
      for (let i = 0; i < Math.max(2, Math.floor(batch / 4)); i++) {
        const w0 = probe.waitedUs()
        const t0 = performance.now()
        await s.callModule('__main__', '_vis_bench_hostcalls', [1])
        envelope.push((performance.now() - t0) * 1000)
        envelopeWait.push(probe.waitedUs() - w0)
      }
      // Host calls are timed inside Python, from the call to its reply.
      const ns = (await s.callModule('__main__', '_vis_bench_hostcalls', [batch])) as number[]
      hostcall.push(...ns.map((x) => x / 1000))
      floor64k.push(...(await peer.ping(bigBatch, big)))
      for (let i = 0; i < bigBatch; i++) {
        const t0 = performance.now()
        await s.callModule('builtins', 'str', [big])
        payload.push((performance.now() - t0) * 1000)
      }
      for (const c of companions) await c.round(batch, bigBatch, big)
    }

    await s.dispose()
    const threads = probe.threads
    probe.close()

    const f50 = quantile(floor, 0.5)
    const f64 = quantile(floor64k, 0.5)
    return {
      python: (await pythonHome(opts.python)).minor,
      iterations: n,
      pinned,
      floor_p50_us: round(f50),
      floor_p99_us: round(quantile(floor, 0.99)),
      exec_p50_us: round(quantile(exec, 0.5)),
      exec_p99_us: round(quantile(exec, 0.99)),
      exec_ratio: round(quantile(exec, 0.5) / f50, 2),
      hostcall_p50_us: round(quantile(hostcall, 0.5)),
      hostcall_p99_us: round(quantile(hostcall, 0.99)),
      hostcall_ratio: round(quantile(hostcall, 0.5) / f50, 2),
      floor_tail_ratio: round(quantile(floor, 0.99) / f50, 2),
      exec_tail_ratio: round(quantile(exec, 0.99) / quantile(exec, 0.5), 2),
      hostcall_tail_ratio: round(quantile(hostcall, 0.99) / quantile(hostcall, 0.5), 2),
      runqueue_threads: threads,
      floor_p99_oncpu_us: round(quantile(withoutWaits(floor, floorWait), 0.99)),
      floor_tail_waited: round(tailWaitShare(floor, floorWait), 2),
      exec_p99_oncpu_us: round(quantile(withoutWaits(exec, execWait), 0.99)),
      exec_tail_waited: round(tailWaitShare(exec, execWait), 2),
      hostcall_env_p50_us: round(quantile(envelope, 0.5)),
      hostcall_env_p99_us: round(quantile(envelope, 0.99)),
      hostcall_p99_oncpu_us: round(quantile(withoutWaits(envelope, envelopeWait), 0.99)),
      hostcall_tail_waited: round(tailWaitShare(envelope, envelopeWait), 2),
      floor64k_p50_us: round(f64),
      floor64k_p99_us: round(quantile(floor64k, 0.99)),
      payload64k_p50_us: round(quantile(payload, 0.5)),
      payload64k_p99_us: round(quantile(payload, 0.99)),
      payload64k_ratio: round(quantile(payload, 0.5) / f64, 2),
      pool_acquire_p50_ms: round(quantile(acquire, 0.5), 2),
      // Few samples (10 and 5): the p99 is their worst.
      pool_acquire_p99_ms: round(quantile(acquire, 0.99), 2),
      cold_create_p50_ms: round(quantile(cold, 0.5), 1),
      cold_create_p99_ms: round(quantile(cold, 0.99), 1),
      idle_session_rss_mb: round(idleRss, 1),
      idle_session_private_mb: round(idlePrivate, 1),
      idle_session_pss_mb: round(idlePss, 1),
    }
  } finally {
    if (pinning) pin(process.pid, `0-${cpus - 1}`)
    peer?.close()
    await rt.close()
    rmSync(root, { recursive: true, force: true })
    if (!opts.home) rmSync(home, { recursive: true, force: true })
  }
}

const TARGETS: Partial<Record<keyof RoundtripResult, [string, number]>> = {
  exec_ratio: ['≤', 1.2],
  hostcall_ratio: ['≤', 1.2],
  payload64k_ratio: ['≤', 1.0],
  pool_acquire_p50_ms: ['≤', 5],
  cold_create_p50_ms: ['≤', 150],
  idle_session_rss_mb: ['≤', 60],
  exec_tail_ratio: ['≤', 3],
  hostcall_tail_ratio: ['≤', 3],
}

// A readable table of one result, with the targets beside the figures.
export function formatRoundtrip(r: RoundtripResult): string {
  const rows: Array<[string, string, string]> = [
    ['floor: Node↔Node JSON line, p50 / p99', `${r.floor_p50_us} / ${r.floor_p99_us} µs`, ''],
    ['exec `x = 1`, p50 / p99', `${r.exec_p50_us} / ${r.exec_p99_us} µs`, ''],
    ['exec ratio to floor', `${r.exec_ratio}×`, 'exec_ratio'],
    ['host call from Python, p50 / p99', `${r.hostcall_p50_us} / ${r.hostcall_p99_us} µs`, ''],
    ['host call ratio to floor', `${r.hostcall_ratio}×`, 'hostcall_ratio'],
    ['tail, floor: its p99 ÷ its median', `${r.floor_tail_ratio}×`, ''],
    ['tail, exec: its p99 ÷ its median', `${r.exec_tail_ratio}×`, 'exec_tail_ratio'],
    ['tail, host call: its p99 ÷ its median', `${r.hostcall_tail_ratio}×`, 'hostcall_tail_ratio'],
    [
      'floor p99 without run-queue waits; tail that waited',
      `${r.floor_p99_oncpu_us} µs; ${Math.round(r.floor_tail_waited * 100)}%`,
      '',
    ],
    [
      'exec p99 without run-queue waits; tail that waited',
      `${r.exec_p99_oncpu_us} µs; ${Math.round(r.exec_tail_waited * 100)}%`,
      '',
    ],
    ['request + 1 host call, p50 / p99', `${r.hostcall_env_p50_us} / ${r.hostcall_env_p99_us} µs`, ''],
    [
      '  its p99 without run-queue waits; tail that waited',
      `${r.hostcall_p99_oncpu_us} µs; ${Math.round(r.hostcall_tail_waited * 100)}%`,
      '',
    ],
    ['64 KiB string, floor: p50 / p99', `${r.floor64k_p50_us} / ${r.floor64k_p99_us} µs`, ''],
    ['64 KiB string, worker: p50 / p99', `${r.payload64k_p50_us} / ${r.payload64k_p99_us} µs`, ''],
    ['64 KiB ratio to floor', `${r.payload64k_ratio}×`, 'payload64k_ratio'],
    [
      'session from the warm pool, p50 / p99',
      `${r.pool_acquire_p50_ms} / ${r.pool_acquire_p99_ms} ms`,
      'pool_acquire_p50_ms',
    ],
    [
      'session with a cold worker, p50 / p99',
      `${r.cold_create_p50_ms} / ${r.cold_create_p99_ms} ms`,
      'cold_create_p50_ms',
    ],
    ['idle session worker RSS (tree)', `${r.idle_session_rss_mb} MB`, 'idle_session_rss_mb'],
    ['idle session private memory', `${r.idle_session_private_mb} MB`, ''],
    ['idle session PSS (tree)', `${r.idle_session_pss_mb} MB`, ''],
  ]
  const w0 = Math.max(...rows.map((x) => x[0].length))
  const w1 = Math.max(...rows.map((x) => x[1].length))
  const lines = rows.map(([label, value, key]) => {
    const t = key ? TARGETS[key as keyof RoundtripResult] : undefined
    const v = key ? (r[key as keyof RoundtripResult] as number) : Number.NaN
    const mark = t ? `target ${t[0]} ${t[1]}  ${v <= t[1] ? 'met' : 'missed'}` : ''
    return `  ${label.padEnd(w0)}  ${value.padStart(w1)}  ${mark}`
  })
  return [
    `vis bench: session worker round trips (Python ${r.python}, ${r.iterations} iterations, ${
      r.pinned ? 'host and peers pinned to separate CPUs' : 'unpinned'
    })`,
    ...lines,
  ].join('\n')
}
