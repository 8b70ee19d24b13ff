// Opt-in: one turn against a real model. Runs only when VIS_TEST_MODEL=<provider>/<model> is set,
// with its endpoint in the usual variables (OPENAI_BASE_URL / OPENAI_API_KEY, ANTHROPIC_API_KEY)
// or a local preset (ollama, lmstudio, vllm, llamacpp). This is the suite's one conditional test:
// without VIS_TEST_MODEL it reports itself as skipped, saying so.
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { agentFor, loadAgentConfig, resolveModel } from '../../src/agent/index.js'
import { createEngine } from '../../src/engine/index.js'

const model = process.env.VIS_TEST_MODEL
const skip = model
  ? false
  : 'VIS_TEST_MODEL is not set: the real-model turn did NOT run (set VIS_TEST_MODEL=<provider>/<model> and its endpoint to run it)'

test(`a real model (${model ?? 'none'}) reads a file through a block and answers`, {
  skip,
  timeout: 600_000,
}, async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-agent-real-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-agent-real-root-'))
  process.env.VIS_HOME = home
  writeFileSync(join(root, 'numbers.txt'), '17\n25\n58\n')
  const config = loadAgentConfig({ home })
  resolveModel(model, config)
  const engine = await createEngine({
    home,
    pool: { size: 0 },
    extensions: false,
    python: process.env.VIS_PYTHON_VERSION,
  })
  try {
    const s = await engine.createSession({ roots: [root] })
    const r = await agentFor(engine, config)
      .session(s.id)
      .turn(
        'Use Python to read numbers.txt in the workspace and add up the numbers in it. Reply with just the sum.',
        { model, maxIterations: 8 },
      )
    console.log(
      `real model ${model}: ${r.status} after ${r.iterations.length} iteration(s): ${JSON.stringify(r.answer)}`,
    )
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.match(r.answer!, /\b100\b/)
    assert.ok(
      r.iterations.some((i) => i.block_ids.length > 0),
      'the model ran at least one block',
    )
    assert.ok(r.usage!.input > 0)
  } finally {
    await engine.close()
  }
})
