// ATTACK (surface 2, the HTTP turn model held to configured models: "spellings of a model name"):
// `allowedTurnModel` (src/agent/child-models.ts) first resolves the client's model as an alias,
// `rule.aliases[asked] ?? asked`, on agent.json's `aliases`: a plain object, so a model named like
// one of Object.prototype's members ("constructor", "toString", "__proto__", "hasOwnProperty")
// "resolves" to a FUNCTION (or the prototype itself), which is then treated as a reference:
// `ref.indexOf` is not a function and the route throws a TypeError. The promise: a model the
// server does not configure is refused with agent.model-not-allowed (or a reference that is not
// <provider>/<model> with agent.bad-model), a 400 that says what to do; on the current code each
// of these names answers 500 http.internal ("Internal error: ref.indexOf is not a function").
// The same lookup runs for a block's `sub_loop(model=...)` and an agent definition's `model`.
// Both directions: the configured model still runs a turn.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startServer } from '../../src/http/index.js'
import { ProviderDouble } from '../agent/double.js'
import { python } from '../agent/harness.js'
import { client } from '../http/helpers.js'

test('an HTTP turn naming an Object.prototype member as its model is refused as a model, not a 500', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-turnalias-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-turnalias-root-'))
  let double: ProviderDouble | undefined
  let server: Awaited<ReturnType<typeof startServer>> | undefined
  const saved = process.env.VIS_HOME
  try {
    process.env.VIS_HOME = home
    double = await new ProviderDouble().start()
    writeFileSync(
      join(home, 'agent.json'),
      JSON.stringify({
        model: 'openai/double-model',
        providers: { openai: { baseURL: double.openaiURL, apiKey: 'sk-http' } },
        aliases: { fast: 'openai/double-model' },
        stallMs: 2_000,
      }),
    )
    server = await startServer({ home, python, port: 0, pool: { size: 0 }, extensions: false })
    const call = client(server.url)
    const s = (await call('POST', '/v1/sessions', { roots: [root] })).body
    const landed: string[] = []
    for (const model of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const r = await call('POST', `/v1/sessions/${s.id}/turns`, { prompt: 'hello', model })
      const code = r.body?.error?.code
      if (r.status !== 400 || !['agent.model-not-allowed', 'agent.bad-model'].includes(code))
        landed.push(
          `model ${JSON.stringify(model)}: ${r.status} ${code}: ${r.body?.error?.message ?? r.text.slice(0, 200)}`,
        )
    }
    assert.deepEqual(
      landed,
      [],
      `model names the configuration never gave were not refused as models:\n${landed.join('\n')}`,
    )
    // Allowed: the configured model (and its alias) still run a turn.
    double.script([{ text: 'fine' }])
    const ok = await call('POST', `/v1/sessions/${s.id}/turns`, { prompt: 'hello', model: 'fast' })
    assert.equal(ok.status, 200, ok.text)
    assert.equal(ok.body.answer, 'fine')
  } finally {
    await server?.close()
    await double?.close()
    if (saved === undefined) delete process.env.VIS_HOME
    else process.env.VIS_HOME = saved
    rmSync(home, { recursive: true, force: true })
    rmSync(root, { recursive: true, force: true })
  }
})
