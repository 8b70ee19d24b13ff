// The agent loop's own cost per iteration, for bench/turn-loop.js and bench/peers.js (issues 17
// and 34). Runs under tsx (the provider double is test TypeScript) against the BUILT package.
//
// An iteration's wall time, from one `iteration.started` to the next (or to turn.completed), less:
// - `loop`: the provider's complete() (measured around each call) and the block
//   (block.started → block.ended): what the loop adds around the model and the block (issue 17);
// - `vs SDK`: the block and the median of the official SDK calling the same double directly with
//   the same kind of request, in the same run: what the loop adds around the model's wire,
//   the provider adapter included (issue 34).
// CPU beside it: this process's user + system time per iteration, less the median of a direct SDK
// call's and the mean of a trivial block's (engine.runBlock on the same session). The double runs
// in a process of its own (provider-double-process.js): its work is a hosted model's, not the
// loop's. `double: 'in-process'` measures as sessions 11-13 did, its CPU counted in this process
// (more in an iteration than in the SDK call, as the loop's requests carry the whole history).
//
// The store runs with durability `normal` by default: with `full` every commit is an fsync, and
// the figure then measures the disk, not the loop.
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'

// dist: the built tree to measure (an A/B run passes two builds).
const built = async (file, dist = new URL('../../dist/', import.meta.url)) => {
  const url = new URL(file, dist)
  if (!existsSync(url))
    throw new Error('the agent loop bench needs the built package: run `npm run build` first')
  return import(url.href)
}

export const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
const cpuMs = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

export async function measureTurnLoop({
  turns = 30,
  iterations = 8,
  durability = 'normal',
  python,
  dist,
  double: where = 'process',
} = {}) {
  const { agentFor, loadAgentConfig, createProvider, resolveModel } = await built('agent/index.js', dist)
  const { PYTHON_TOOL } = await built('agent/providers/types.js', dist)
  const { createEngine } = await built('engine/index.js', dist)
  const { ProviderDouble, pyCall } = await import('../../test/agent/double.ts')
  const { startDoubleInProcess, startDoubleProcess } = await import('./provider-double-process.js')
  const { default: OpenAI } = await import('openai')

  const home = mkdtempSync(join(tmpdir(), 'vis-bench-turn-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-bench-turn-root-'))
  const savedHome = process.env.VIS_HOME
  process.env.VIS_HOME = home
  const double =
    where === 'in-process' ? await startDoubleInProcess(ProviderDouble) : await startDoubleProcess()
  const engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false, durability })
  try {
    const config = loadAgentConfig({
      home,
      overrides: { model: 'openai/bench', providers: { openai: { baseURL: double.openaiURL, apiKey: 'x' } } },
    })
    const agent = agentFor(engine, config)
    const { id } = await engine.createSession({ roots: [root] })

    // The model's time, measured around each request.
    const base = createProvider(resolveModel(undefined, config))
    const modelMs = []
    const provider = {
      name: base.name,
      model: base.model,
      images: base.images,
      ping: (s) => base.ping(s),
      async complete(req) {
        const t0 = performance.now()
        try {
          return await base.complete(req)
        } finally {
          modelMs.push(performance.now() - t0)
        }
      },
    }

    const marks = []
    // Only the events the figures need: process.cpuUsage() is a system call, and on every
    // model.delta (a streamed reply is dozens) it put the bench's own cost into the loop's CPU.
    const marked = new Set(['iteration.started', 'turn.completed', 'block.started', 'block.ended'])
    agent.subscribe(id, (ev) => {
      if (marked.has(ev.type)) marks.push({ type: ev.type, t: performance.now(), cpu: cpuMs() })
    })

    // Baselines, measured between the turns so they see the same machine. A trivial block
    // through the same engine and session:
    const blockRt = []
    const blockCpu = []
    const blocks = async (n) => {
      for (let i = 0; i < n; i++) {
        const c0 = cpuMs()
        const t0 = performance.now()
        await engine.runBlock(id, { code: 'pass' })
        blockRt.push(performance.now() - t0)
        blockCpu.push(cpuMs() - c0)
      }
    }
    // The SDK on its own: one streamed Chat Completions request, answered with a tool call, read
    // to its end. It sends what the loop sent in the middle of the turn just run (the same
    // messages and tools, so the same body to encode and write: the session's history grows with
    // every turn); before the first turn, a system prompt and a task with the python tool.
    const sdk = new OpenAI({ baseURL: double.openaiURL, apiKey: 'x' })
    let request = {
      messages: [
        { role: 'system', content: 'You write Python.' },
        { role: 'user', content: 'bench' },
      ],
      tools: [{ type: 'function', function: { ...PYTHON_TOOL } }],
    }
    const sdkCall = async () => {
      const stream = await sdk.chat.completions.create({
        model: 'bench',
        ...request,
        stream: true,
        stream_options: { include_usage: true },
      })
      let args = ''
      for await (const chunk of stream)
        args += chunk.choices?.[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? ''
      if (!args.includes('x = 1')) throw new Error(`the double's tool call did not arrive: ${args}`)
    }
    const sdkMs = []
    const sdkCpu = []
    const sdkCalls = async (n) => {
      await double.script([], { calls: [pyCall('x = 1')] })
      for (let i = 0; i < n; i++) {
        const c0 = cpuMs()
        const t0 = performance.now()
        await sdkCall()
        sdkMs.push(performance.now() - t0)
        sdkCpu.push(cpuMs() - c0)
      }
      await double.script([], undefined)
    }
    await blocks(20)
    await sdkCalls(20)
    blockRt.length = 0
    blockCpu.length = 0
    sdkMs.length = 0
    sdkCpu.length = 0

    // Per iteration: its wall and CPU, and whether it ran a block; the baselines' medians are
    // taken out once every turn has run.
    const iters = []
    // Whole turns too: what happens before the first iteration and after the last (the turn's
    // records, its usage, the answer) is loop overhead as well, spread over its iterations.
    const whole = []
    for (let turn = 0; turn < turns + 2; turn++) {
      await double.script([
        ...Array.from({ length: iterations - 1 }, (_, i) => ({ calls: [pyCall(`x = ${i}`)] })),
        { text: 'done' },
      ])
      marks.length = 0
      modelMs.length = 0
      const c0 = cpuMs()
      const t0 = performance.now()
      const r = await agent.turn(id, 'bench', { provider })
      const turnWall = performance.now() - t0
      const turnCpu = cpuMs() - c0
      if (r.status !== 'done') throw new Error(`turn ${r.status}: ${JSON.stringify(r.error)}`)
      request = (await double.middle()) ?? request
      await blocks(iterations)
      await sdkCalls(iterations)
      if (turn < 2) {
        // warm-up
        blockRt.length = 0
        blockCpu.length = 0
        sdkMs.length = 0
        sdkCpu.length = 0
        continue
      }
      const starts = marks.filter((m) => m.type === 'iteration.started')
      const end = marks.find((m) => m.type === 'turn.completed')
      const bs = marks.filter((m) => m.type === 'block.started')
      const be = marks.filter((m) => m.type === 'block.ended')
      for (let i = 0; i < starts.length; i++) {
        const next = starts[i + 1] ?? end
        const wall = next.t - starts[i].t
        const block = i < bs.length ? be[i].t - bs[i].t : 0
        // The last iteration answers with text and runs no block.
        iters.push({ wall, block, model: modelMs[i], cpu: next.cpu - starts[i].cpu, ran: i < bs.length })
      }
      const blockSum = bs.reduce((a, m, i) => a + (be[i].t - m.t), 0)
      whole.push({ wall: turnWall, cpu: turnCpu, blockSum, n: starts.length, blocks: bs.length })
    }
    const sdkP50 = percentile(sdkMs, 50)
    const sdkCpuP50 = percentile(sdkCpu, 50)
    const blockCpuP50 = percentile(blockCpu, 50)
    const loop = iters.map((x) => x.wall - x.model - x.block)
    const vsSdk = iters.map((x) => x.wall - x.block - sdkP50)
    const cpuOver = iters.map((x) => x.cpu - sdkCpuP50 - (x.ran ? blockCpuP50 : 0))
    const turnWallOver = whole.map((x) => (x.wall - x.blockSum - x.n * sdkP50) / x.n)
    const turnCpuOver = whole.map((x) => (x.cpu - x.n * sdkCpuP50 - x.blocks * blockCpuP50) / x.n)
    const q = (xs) => ({ p50: percentile(xs, 50), p90: percentile(xs, 90), p99: percentile(xs, 99) })
    return {
      durability,
      double: where,
      load_average_1m: loadavg()[0],
      turns,
      iterations_per_turn: iterations,
      samples: loop.length,
      overhead_ms: q(loop),
      overhead_vs_sdk_ms: q(vsSdk),
      cpu_overhead_ms: q(cpuOver),
      turn_overhead_per_iteration_ms: { wall: q(turnWallOver), cpu: q(turnCpuOver) },
      sdk_direct_ms: {
        p50: sdkP50,
        p99: percentile(sdkMs, 99),
        cpu_p50: sdkCpuP50,
        // The last request it sent (the loop's middle request of the last turn), in JSON bytes.
        request_bytes: Buffer.byteLength(JSON.stringify(request)),
      },
      baseline_block_roundtrip_ms: {
        p50: percentile(blockRt, 50),
        p99: percentile(blockRt, 99),
        cpu: blockCpuP50,
      },
      ratio_p50: percentile(loop, 50) / percentile(blockRt, 50),
      target_ms: 2,
      target_cpu_ms: 1,
      within_target: percentile(turnWallOver, 50) <= 2 && percentile(turnCpuOver, 50) <= 1,
    }
  } finally {
    await engine.close()
    await double.close()
    if (savedHome === undefined) delete process.env.VIS_HOME
    else process.env.VIS_HOME = savedHome
    rmSync(home, { recursive: true, force: true })
    rmSync(root, { recursive: true, force: true })
  }
}

export function formatTurnLoop(r) {
  const f = (x) => x.toFixed(3)
  const row = (label, x) =>
    `  ${label.padEnd(30)} p50 ${f(x.p50)} ms   p90 ${f(x.p90)} ms   p99 ${f(x.p99)} ms`
  return [
    `agent loop overhead per iteration (${r.samples} iterations, durability ${r.durability}, double ${r.double === 'in-process' ? 'in this process' : 'in its own process'}, load ${r.load_average_1m.toFixed(1)})`,
    row('loop (model and block out)', r.overhead_ms),
    row('vs the SDK direct (wall)', r.overhead_vs_sdk_ms),
    row('vs the SDK direct (CPU)', r.cpu_overhead_ms),
    row('whole turn ÷ iterations (wall)', r.turn_overhead_per_iteration_ms.wall),
    row('whole turn ÷ iterations (CPU)', r.turn_overhead_per_iteration_ms.cpu),
    `  (target, whole turns: ≤ ${r.target_ms} ms wall, ≤ ${r.target_cpu_ms} ms CPU at p50: ${r.within_target ? 'met' : 'NOT met'})`,
    `  the SDK calling the double directly   p50 ${f(r.sdk_direct_ms.p50)} ms   p99 ${f(r.sdk_direct_ms.p99)} ms   CPU ${f(r.sdk_direct_ms.cpu_p50)} ms   (its last request ${r.sdk_direct_ms.request_bytes} B, as the loop sent it)`,
    `  a trivial block's round trip         p50 ${f(r.baseline_block_roundtrip_ms.p50)} ms   p99 ${f(r.baseline_block_roundtrip_ms.p99)} ms   CPU ${f(r.baseline_block_roundtrip_ms.cpu)} ms`,
  ].join('\n')
}
