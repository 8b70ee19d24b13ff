// The model an HTTP client names for a turn is held to what the person configured (agent.json's
// default model and its provider, its aliases, its providers' entries, VIS_MODEL), the rule
// sub_loop children follow (src/agent/child-models.ts). Both directions over a real server and a
// real provider double: configured models run; anything else is agent.model-not-allowed (400)
// before any request, with a message naming what is allowed and how to allow more.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { allowedTurnModel, childModelRule } from '../../src/agent/child-models.js'
import type { AgentConfig } from '../../src/agent/config.js'
import { startServer } from '../../src/http/index.js'
import { isVisError } from '../../src/util/errors.js'
import { client } from '../http/helpers.js'
import { ProviderDouble } from './double.js'
import { python } from './harness.js'

// Sets env vars for one test; restored after it.
function withEnv(vars: Record<string, string | undefined>): void {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]))
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
  after(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  })
}

async function serve(agentJson: (double: ProviderDouble) => unknown) {
  const home = mkdtempSync(join(tmpdir(), 'vis-turn-models-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-turn-models-root-'))
  withEnv({ VIS_HOME: home })
  const double = await new ProviderDouble().start()
  writeFileSync(join(home, 'agent.json'), JSON.stringify(agentJson(double)))
  const server = await startServer({ home, python, port: 0, pool: { size: 0 }, extensions: false })
  after(async () => {
    await server.close()
    await double.close()
    rmSync(home, { recursive: true, force: true })
    rmSync(root, { recursive: true, force: true })
  })
  const call = client(server.url)
  const session = (await call('POST', '/v1/sessions', { roots: [root] })).body
  const turn = (body: Record<string, unknown>) => call('POST', `/v1/sessions/${session.id}/turns`, body)
  return { home, double, call, session, turn }
}

test('an HTTP turn runs with any model agent.json configures and with none other', async () => {
  // An API key and an endpoint in the environment: they open anthropic to the person's own
  // library calls, never to an HTTP client's turn.
  const { home, double, call, session, turn } = await serve((d) => ({
    model: 'openai/double-model',
    providers: {
      openai: { baseURL: d.openaiURL, apiKey: 'sk-http' },
      // A preset's provider the person set up (here pointed at the double).
      ollama: { baseURL: d.openaiURL },
    },
    aliases: { fast: 'openai/fast-model' },
    stallMs: 2_000,
  }))
  withEnv({ ANTHROPIC_API_KEY: 'sk-env', ANTHROPIC_BASE_URL: double.anthropicURL, VIS_MODEL: undefined })

  // Allowed: the default, another model of a configured provider, an alias, a configured preset.
  for (const [model, sent] of [
    [undefined, 'double-model'],
    ['openai/double-model', 'double-model'],
    ['openai/other-model', 'other-model'],
    ['fast', 'fast-model'],
    ['ollama/qwen-local', 'qwen-local'],
  ] as const) {
    double.script([{ text: `ran ${sent}` }])
    const before = double.requests.length
    const r = await turn({ prompt: 'hello', ...(model ? { model } : {}) })
    assert.equal(r.status, 200, `${model}: ${r.text}`)
    assert.equal(r.body.answer, `ran ${sent}`)
    assert.equal(double.requests.length, before + 1)
    assert.equal(double.requests.at(-1)!.body.model, sent)
  }

  // Denied: a preset nobody configured, a provider only the environment's key opens.
  for (const model of ['lmstudio/anything', 'anthropic/claude-x', 'vllm/x']) {
    const before = double.requests.length
    const turnsBefore = (await call('GET', `/v1/sessions/${session.id}/turns`)).body.turns.length
    const r = await turn({ prompt: 'never sent', model })
    assert.equal(r.status, 400, r.text)
    assert.equal(r.body.error.code, 'agent.model-not-allowed')
    assert.equal(r.body.error.details.model, model)
    assert.equal(r.body.error.details.sessionId, session.id)
    const msg: string = r.body.error.message
    assert.ok(msg.includes(JSON.stringify(model)), msg)
    // What is configured, and how to configure more; no host path.
    for (const part of [
      'openai/double-model',
      'fast',
      'openai/<any model>',
      'ollama/<any model>',
      '"providers"',
    ])
      assert.ok(msg.includes(part), `${part} missing from: ${msg}`)
    assert.ok(!msg.includes(home), msg)
    // Refused before any request, and no turn was made of it.
    assert.equal(double.requests.length, before)
    assert.equal((await call('GET', `/v1/sessions/${session.id}/turns`)).body.turns.length, turnsBefore)
  }

  // A reference that is not <provider>/<model> is still agent.bad-model.
  const bad = await turn({ prompt: 'x', model: 'nope/x' })
  assert.equal(bad.status, 400, bad.text)
  assert.equal(bad.body.error.code, 'agent.bad-model')
})

test("VIS_MODEL configures an HTTP turn's model and its provider", async () => {
  const { double, turn } = await serve(() => ({ stallMs: 2_000 }))
  withEnv({
    VIS_MODEL: 'openai/env-model',
    OPENAI_BASE_URL: double.openaiURL,
    OPENAI_API_KEY: 'sk-env',
    ANTHROPIC_API_KEY: 'sk-env',
    ANTHROPIC_BASE_URL: double.anthropicURL,
  })
  double.script([{ text: 'env default' }, { text: 'env provider' }])
  const named = await turn({ prompt: 'hello', model: 'openai/env-model' })
  assert.equal(named.status, 200, named.text)
  assert.equal(named.body.answer, 'env default')
  const other = await turn({ prompt: 'hello', model: 'openai/second' })
  assert.equal(other.status, 200, other.text)
  assert.equal(double.requests.at(-1)!.body.model, 'second')
  const before = double.requests.length
  const refused = await turn({ prompt: 'hello', model: 'anthropic/claude-x' })
  assert.equal(refused.status, 400, refused.text)
  assert.equal(refused.body.error.code, 'agent.model-not-allowed')
  assert.match(refused.body.error.message, /\(openai\/env-model, openai\/<any model>\)/)
  assert.equal(double.requests.length, before)
})

test('allowedTurnModel: the configured set, aliases resolved, the rest refused', () => {
  const config = {
    model: 'openai/m',
    providers: { ollama: {} },
    aliases: { a: 'anthropic/claude-a' },
  } as unknown as AgentConfig
  const rule = childModelRule(config, {})
  const ctx = { sessionId: 's', op: 'turn' }
  assert.equal(allowedTurnModel(rule, 'openai/m', ctx), 'openai/m')
  assert.equal(allowedTurnModel(rule, 'openai/n', ctx), 'openai/n')
  assert.equal(allowedTurnModel(rule, 'ollama/q', ctx), 'ollama/q')
  assert.equal(allowedTurnModel(rule, 'a', ctx), 'anthropic/claude-a')
  assert.equal(allowedTurnModel(rule, 'anthropic/claude-a', ctx), 'anthropic/claude-a')
  for (const asked of ['anthropic/claude-b', 'lmstudio/x', 'llamacpp/x', 'openai-responses/m'])
    assert.throws(
      () => allowedTurnModel(rule, asked, ctx),
      (e: unknown) => isVisError(e, 'agent.model-not-allowed') && e.message.includes('set VIS_MODEL'),
    )
  // Not a model reference at all: left to resolveModel's agent.bad-model.
  assert.equal(allowedTurnModel(rule, 'nope/x', ctx), 'nope/x')
  assert.equal(allowedTurnModel(rule, 'plain', ctx), 'plain')
  // The environment's VIS_MODEL is the default model.
  assert.equal(allowedTurnModel(childModelRule(config, { VIS_MODEL: 'vllm/v' }), 'vllm/w', ctx), 'vllm/w')
})
