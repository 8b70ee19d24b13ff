import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ProviderDouble } from './double.js'
import { harness } from './harness.js'

// The agent keeps one provider (one SDK client) per resolved model spec across turns (issue 34:
// a new client cost about a millisecond every turn). What the spec resolves from is read again
// at every turn, so a changed endpoint or model is used by the next turn, never a stale client.
test('a turn after the endpoint or the model changed talks to the new one', async () => {
  const saved = process.env.OPENAI_BASE_URL
  // No baseURL in agent.json: the endpoint comes from OPENAI_BASE_URL, as a user's shell sets it.
  const h = await harness({ config: { providers: { openai: { apiKey: 'sk-double' } } } })
  const other = await new ProviderDouble().start()
  try {
    process.env.OPENAI_BASE_URL = h.double.openaiURL
    h.double.script([{ text: 'one' }, { text: 'three' }])
    other.script([{ text: 'two' }])
    const first = await h.agent.turn(h.sessionId, 'first')
    assert.equal(first.answer, 'one')

    process.env.OPENAI_BASE_URL = other.openaiURL
    const second = await h.agent.turn(h.sessionId, 'second')
    assert.equal(second.answer, 'two')
    assert.deepEqual([h.double.requests.length, other.requests.length], [1, 1])

    process.env.OPENAI_BASE_URL = h.double.openaiURL
    const third = await h.agent.turn(h.sessionId, 'third', { model: 'openai/another-model' })
    assert.equal(third.answer, 'three')
    assert.equal(third.model, 'openai/another-model')
    assert.deepEqual(
      h.double.requests.map((r) => (r.body as { model: string }).model),
      ['double-model', 'another-model'],
    )
  } finally {
    if (saved === undefined) delete process.env.OPENAI_BASE_URL
    else process.env.OPENAI_BASE_URL = saved
    await other.close()
    await h.close()
  }
})
