// OpenAI Responses reasoning items through the loop: a reasoning model's items (with their
// encrypted_content, asked for with `include` since requests are stateless) are sent back
// verbatim in the next requests and stored with their iteration; a model without reasoning,
// which refuses `include`, gets the request again without it and its requests stay as before.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { pyCall, type Recorded } from './double.js'
import { harness, storedReasoning } from './harness.js'

const CODE = 'x = 6 * 7\nprint(x)'
const ENC1 = 'gAAAAABpF-opaque-chain-one=='
const ENC2 = 'gAAAAABpF-opaque-chain-two=='

// The reasoning item exactly as the double streamed it in its output_item.done frame.
const streamedItem = (n: number, summary: string, encrypted: string) => ({
  id: `rs_double${n}`,
  type: 'reasoning',
  encrypted_content: encrypted,
  summary: [{ type: 'summary_text', text: summary }],
})

test('responses: the reasoning item of each reply goes back verbatim in the next requests, and is stored with its iteration', async () => {
  const h = await harness({ config: { model: 'openai-responses/double-model' } })
  try {
    h.double.script([
      { reasoning: { summary: 'Multiply, then print.', encrypted: ENC1 }, calls: [pyCall(CODE)] },
      { reasoning: { summary: 'The block printed 42.', encrypted: ENC2 }, text: 'It is 42.' },
      { text: 'Still 42.' },
    ])
    const r = await h.agent.turn(h.sessionId, 'what is 6*7?')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(r.answer, 'It is 42.')
    const [first, second] = h.double.requests as [Recorded, Recorded]
    // Stateless, so the encrypted chain is asked for.
    assert.equal(first.body.store, false)
    assert.deepEqual(first.body.include, ['reasoning.encrypted_content'])
    const item1 = streamedItem(1, 'Multiply, then print.', ENC1)
    assert.deepEqual(second.body.input, [
      { role: 'user', content: [{ type: 'input_text', text: 'what is 6*7?' }] },
      item1,
      {
        type: 'function_call',
        call_id: 'call_double1_0',
        name: 'python_execution',
        arguments: JSON.stringify({ code: CODE }),
      },
      { type: 'function_call_output', call_id: 'call_double1_0', output: '42\n' },
    ])
    // Byte for byte: the same keys in the same order as the stream carried them.
    assert.equal(JSON.stringify(second.body.input[1]), JSON.stringify(item1))

    // Stored with the iteration that received it; an iteration without reasoning stores none.
    assert.deepEqual(storedReasoning(h, r.id), [[item1], [streamedItem(2, 'The block printed 42.', ENC2)]])

    // The next turn of the session carries both, each before the output it led to.
    const r2 = await h.agent.turn(h.sessionId, 'and again?')
    assert.equal(r2.answer, 'Still 42.')
    const third = h.double.requests[2]!
    assert.deepEqual(third.body.input.slice(1), [
      item1,
      second.body.input[2],
      second.body.input[3],
      streamedItem(2, 'The block printed 42.', ENC2),
      { role: 'assistant', content: 'It is 42.' },
      { role: 'user', content: [{ type: 'input_text', text: 'and again?' }] },
    ])
  } finally {
    await h.close()
  }
})

test('responses: a model without reasoning refuses include; the request goes again without it, and its requests are unchanged', async () => {
  const h = await harness({ config: { model: 'openai-responses/double-model' } })
  try {
    const refused = {
      fault: {
        kind: 'status' as const,
        status: 400,
        message: 'Encrypted content is not supported with this model.',
        param: 'include',
      },
    }
    let asked = 0
    // Refuses every request that asks for encrypted reasoning, as OpenAI does for such models.
    h.double.script([], (req) => {
      if (req.body.include) return refused
      asked++
      return asked === 1 ? { calls: [pyCall(CODE)] } : { text: 'It is 42.' }
    })
    const r = await h.agent.turn(h.sessionId, 'what is 6*7?')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(r.answer, 'It is 42.')
    // Not a failure of the turn: no retry was reported, and only the first request asked.
    assert.ok(!h.events.some((e) => e.type === 'model.retry'))
    const [withInclude, first, second] = h.double.requests as [Recorded, Recorded, Recorded]
    assert.equal(h.double.requests.length, 3)
    const { include, ...rest } = withInclude.body
    assert.deepEqual(include, ['reasoning.encrypted_content'])
    assert.deepEqual(first.body, rest)
    assert.equal('include' in second.body, false)
    assert.deepEqual(second.body.input, [
      { role: 'user', content: [{ type: 'input_text', text: 'what is 6*7?' }] },
      {
        type: 'function_call',
        call_id: 'call_double2_0',
        name: 'python_execution',
        arguments: JSON.stringify({ code: CODE }),
      },
      { type: 'function_call_output', call_id: 'call_double2_0', output: '42\n' },
    ])
    assert.deepEqual(storedReasoning(h, r.id), [null, null])
  } finally {
    await h.close()
  }
})

test('responses: another 400 is not taken for a refused include; the turn fails with the provider message', async () => {
  const h = await harness({ config: { model: 'openai-responses/double-model' } })
  try {
    h.double.script([
      { fault: { kind: 'status', status: 400, message: "Invalid value for 'input'.", param: 'input' } },
    ])
    const r = await h.agent.turn(h.sessionId, 'what is 6*7?')
    assert.equal(r.status, 'failed')
    assert.match(r.error!.message, /Invalid value for 'input'/)
    assert.equal(h.double.requests.length, 1)
  } finally {
    await h.close()
  }
})
