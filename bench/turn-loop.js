#!/usr/bin/env node
// The agent loop's own overhead per iteration (issue 17): everything a turn spends that is
// neither the model request nor the block: persisting the iteration and its usage, submitting
// and recording the block, rendering what the model reads, events. Reported, never asserted.
//
//   node --import tsx bench/turn-loop.js [--turns N] [--iterations N] [--durability normal|full] [--json]
//
// The model is the provider double (a loopback server speaking Chat Completions) through the
// official SDK; each request's time is measured around the provider and subtracted, as is each
// block's (block.started → block.ended). The baseline, measured in the same run, is one trivial
// block's round trip through the same engine.
//
// The store runs with durability `normal` by default: with `full` every commit is an fsync, and
// the figure then measures the disk (the loop commits once per iteration, the engine once per
// block start), not the loop.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const { agentFor, loadAgentConfig, createProvider, resolveModel } = await import('../src/agent/index.ts')
const { createEngine } = await import('../src/engine/index.ts')
const { ProviderDouble, pyCall } = await import('../test/agent/double.ts')

const argv = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = argv.indexOf(name)
  return i >= 0 ? Number(argv[i + 1]) : dflt
}
const TURNS = opt('--turns', 30)
const ITER = opt('--iterations', 8)

const home = mkdtempSync(join(tmpdir(), 'vis-bench-turn-home-'))
const root = mkdtempSync(join(tmpdir(), 'vis-bench-turn-root-'))
process.env.VIS_HOME = home
const double = await new ProviderDouble().start()
const durability = argv.includes('--durability') ? argv[argv.indexOf('--durability') + 1] : 'normal'
const engine = await createEngine({ home, pool: { size: 0 }, extensions: false, durability })
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
agent.subscribe(id, (ev) => marks.push({ type: ev.type, t: performance.now() }))

const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}

// Baseline: trivial blocks through the same engine.
for (let i = 0; i < 20; i++) await engine.runBlock(id, { code: 'pass' })
const blockRt = []
for (let i = 0; i < 200; i++) {
  const t0 = performance.now()
  await engine.runBlock(id, { code: 'pass' })
  blockRt.push(performance.now() - t0)
}

const overhead = []
for (let turn = 0; turn < TURNS + 2; turn++) {
  double.script([
    ...Array.from({ length: ITER - 1 }, (_, i) => ({ calls: [pyCall(`x = ${i}`)] })),
    { text: 'done' },
  ])
  marks.length = 0
  modelMs.length = 0
  const r = await agent.turn(id, 'bench', { provider })
  if (r.status !== 'done') throw new Error(`turn ${r.status}: ${JSON.stringify(r.error)}`)
  if (turn < 2) continue // warm-up
  const starts = marks.filter((m) => m.type === 'iteration.started').map((m) => m.t)
  const end = marks.find((m) => m.type === 'turn.completed').t
  const bs = marks.filter((m) => m.type === 'block.started').map((m) => m.t)
  const be = marks.filter((m) => m.type === 'block.ended').map((m) => m.t)
  for (let i = 0; i < starts.length; i++) {
    const wall = (starts[i + 1] ?? end) - starts[i]
    const block = i < bs.length ? be[i] - bs[i] : 0
    overhead.push(wall - modelMs[i] - block)
  }
}

const result = {
  durability,
  load_average_1m: (await import('node:os')).loadavg()[0],
  turns: TURNS,
  iterations_per_turn: ITER,
  samples: overhead.length,
  overhead_ms: {
    p50: percentile(overhead, 50),
    p90: percentile(overhead, 90),
    p99: percentile(overhead, 99),
  },
  baseline_block_roundtrip_ms: { p50: percentile(blockRt, 50), p99: percentile(blockRt, 99) },
  ratio_p50: percentile(overhead, 50) / percentile(blockRt, 50),
  target_ms: 2,
  within_target: percentile(overhead, 50) <= 2 && percentile(overhead, 99) <= 2,
}
await engine.close()
await double.close()
if (argv.includes('--json')) console.log(JSON.stringify(result))
else {
  const f = (x) => x.toFixed(3)
  console.log(
    `agent loop overhead per iteration (${result.samples} iterations, model and block time excluded, durability ${durability})`,
  )
  console.log(
    `  loop overhead      p50 ${f(result.overhead_ms.p50)} ms   p90 ${f(result.overhead_ms.p90)} ms   p99 ${f(result.overhead_ms.p99)} ms   (target ≤ 2 ms: ${result.within_target ? 'met' : 'NOT met'})`,
  )
  console.log(
    `  baseline: a trivial block's round trip   p50 ${f(result.baseline_block_roundtrip_ms.p50)} ms   p99 ${f(result.baseline_block_roundtrip_ms.p99)} ms`,
  )
  console.log(
    `  overhead / block round trip (p50): ${result.ratio_p50.toFixed(2)}x   (machine load average ${result.load_average_1m.toFixed(1)})`,
  )
}
