#!/usr/bin/env node
// Turns longer than the context window (issue 31 §4): a turn of 40 iterations (cap raised to
// 50), each block printing 3 KB, against a 40 KB window, finishes. Printed: every request's size
// in bytes, which were summary requests or refused, each compaction, and the turn's end.
// Reported, never asserted.
//
//   node --import tsx bench/compaction.js [--iterations N] [--kb N] [--window-kb N] [--dialect chat|responses|anthropic] [--json]
//
// Two runs per dialect, both against the provider double refusing any request over the window
// in that dialect's wording:
// - `estimate`: agent.json names the window (contextWindows, tokens = bytes / 4), so the loop
//   compacts before a request would fill it;
// - `refusal`: the loop believes the window is huge; only the provider's refusals make it compact.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const { agentFor, loadAgentConfig } = await import('../src/agent/index.ts')
const { createEngine } = await import('../src/engine/index.ts')
const { ProviderDouble, pyCall } = await import('../test/agent/double.ts')

const argv = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : dflt
}
const ITER = Number(opt('--iterations', 40))
const KB = Number(opt('--kb', 3))
const WINDOW = Number(opt('--window-kb', 40)) * 1000
const DIALECTS = argv.includes('--dialect') ? [opt('--dialect')] : ['chat', 'responses', 'anthropic']
const JSON_OUT = argv.includes('--json')
const MODEL = { chat: 'openai/bench', responses: 'openai-responses/bench', anthropic: 'anthropic/bench' }

const isSummary = (req) => JSON.stringify(req.body).includes('You summarise the earlier part')

async function run(dialect, mode) {
  const home = mkdtempSync(join(tmpdir(), 'vis-bench-compact-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-bench-compact-root-'))
  process.env.VIS_HOME = home
  const double = await new ProviderDouble().start()
  double.contextBytes = WINDOW
  const engine = await createEngine({ home, pool: { size: 0 }, extensions: false })
  const model = MODEL[dialect]
  const config = loadAgentConfig({
    home,
    overrides: {
      model,
      maxIterations: 50,
      providers: {
        openai: { baseURL: double.openaiURL, apiKey: 'x' },
        'openai-responses': { baseURL: double.openaiURL, apiKey: 'x' },
        anthropic: { baseURL: double.anthropicURL, apiKey: 'x' },
      },
      contextWindows: { [model]: mode === 'estimate' ? Math.floor(WINDOW / 4) : 10_000_000 },
      backoffMs: [10, 20],
    },
  })
  const agent = agentFor(engine, config)
  const { id } = await engine.createSession({ roots: [root] })
  let blocks = 0
  double.script([], (req) => {
    if (isSummary(req)) return { text: `Summary: blocks 1..${blocks} printed ${KB} KB each; keep going.` }
    if (blocks < ITER) {
      blocks++
      return {
        text: `block ${blocks}`,
        calls: [pyCall(`print(${JSON.stringify(String(blocks % 10))} * ${KB * 1024})`)],
      }
    }
    return { text: `All ${ITER} blocks ran.` }
  })
  const compactions = []
  agent.subscribe(id, (ev) => {
    if (ev.type === 'turn.compacted') compactions.push(ev)
  })
  const t0 = performance.now()
  const turn = await agent.turn(id, `Run ${ITER} blocks that each print ${KB} KB, then say so.`)
  const ms = performance.now() - t0
  const requests = double.requests.map((q) => ({
    bytes: Buffer.byteLength(JSON.stringify(q.body)),
    kind: isSummary(q) ? 'summary' : q.refused ? 'refused' : 'model',
  }))
  await engine.close()
  await double.close()
  return {
    dialect,
    mode,
    status: turn.status,
    error: turn.error,
    iterations: turn.iterations.length,
    blocks,
    ms: Math.round(ms),
    window_bytes: WINDOW,
    max_model_request_bytes: Math.max(...requests.filter((r) => r.kind === 'model').map((r) => r.bytes)),
    requests,
    compactions: compactions.map((c) => ({
      reason: c.reason,
      folded: c.folded_messages,
      kept: c.kept_iterations,
      tokens: `${c.tokens_before}→${c.tokens_after}`,
    })),
  }
}

const results = []
for (const dialect of DIALECTS)
  for (const mode of ['estimate', 'refusal']) results.push(await run(dialect, mode))

if (JSON_OUT) console.log(JSON.stringify(results, null, 2))
else {
  console.log(`${ITER} iterations × ${KB} KB printed, window ${WINDOW / 1000} KB (iteration cap 50)\n`)
  for (const r of results) {
    console.log(
      `${r.dialect}/${r.mode}: ${r.status}${r.error ? ` (${r.error.code})` : ''} · ${r.iterations} iterations, ${r.blocks} blocks · ${r.ms} ms · ` +
        `${r.compactions.length} compactions · largest model request ${r.max_model_request_bytes} B`,
    )
    console.log(
      `  requests (bytes; s = summary, r = refused): ${r.requests
        .map((q) => `${q.bytes}${q.kind === 'summary' ? 's' : q.kind === 'refused' ? 'r' : ''}`)
        .join(' ')}`,
    )
    for (const c of r.compactions)
      console.log(
        `  compacted (${c.reason}): ${c.folded} messages folded, ${c.kept} iterations kept, ~${c.tokens} tokens`,
      )
    console.log('')
  }
}
