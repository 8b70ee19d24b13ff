// The Anthropic Messages and OpenAI Responses providers, each through its official SDK against
// the double's wire: the exact request bodies, the reassembled tool calls, usage, and a fault each.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { pyCall } from './double.js'
import { harness } from './harness.js'

const CODE = 'x = 6 * 7\nprint(x)'

test('anthropic: tool_use from input_json_delta fragments, tool_result appended, usage with cache reads', async () => {
  const h = await harness({ config: { model: 'anthropic/double-model' } })
  try {
    h.double.script([
      { fault: { kind: 'status', status: 429, retryAfter: '0' } },
      { text: 'Computing.', calls: [pyCall(CODE)], usage: { input: 500, output: 20, cached: 300 } },
      { text: 'It is 42.', usage: { input: 600, output: 5, cached: 500 } },
    ])
    const r = await h.agent.turn(h.sessionId, 'what is 6*7?')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(r.answer, 'It is 42.')
    assert.equal(r.model, 'anthropic/double-model')
    assert.deepEqual(r.usage, { input: 1100, output: 25, reasoning: 0, cached: 800, cost_usd: null })
    assert.deepEqual(
      r.iterations.map((i) => i.request_id),
      ['req_double2', 'req_double3'],
    )
    const [, first, second] = h.double.requests
    assert.equal(first!.path, '/v1/messages')
    // This SDK version sends the key as a bearer token.
    assert.equal(first!.headers.authorization, 'Bearer sk-ant-double')
    assert.ok(first!.headers['anthropic-version'])
    const { system, ...rest } = first!.body
    // Cache breakpoints: the system prompt and the newest message block.
    assert.equal(system.length, 1)
    assert.match(system[0].text, /^# How you work/)
    assert.deepEqual(system[0].cache_control, { type: 'ephemeral' })
    assert.deepEqual(rest, {
      model: 'double-model',
      max_tokens: 16000,
      messages: [
        {
          role: 'user',
          content: [{ type: 'text', text: 'what is 6*7?', cache_control: { type: 'ephemeral' } }],
        },
      ],
      stream: true,
      tools: [
        {
          name: 'python_execution',
          description: rest.tools[0].description,
          input_schema: {
            type: 'object',
            properties: { code: { type: 'string', description: 'The Python source of the block.' } },
            required: ['code'],
            additionalProperties: false,
          },
        },
      ],
      tool_choice: { type: 'auto' },
    })
    assert.deepEqual(second!.body.messages, [
      { role: 'user', content: [{ type: 'text', text: 'what is 6*7?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Computing.' },
          { type: 'tool_use', id: 'toolu_double2_1', name: 'python_execution', input: { code: CODE } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_double2_1',
            content: [{ type: 'text', text: '42\n' }],
            cache_control: { type: 'ephemeral' },
          },
        ],
      },
    ])
  } finally {
    await h.close()
  }
})

test('openai-responses: function_call items, function_call_output appended, reasoning tokens; a cut stream is retried', async () => {
  const h = await harness({
    config: {
      model: 'openai-responses/double-model',
      prices: { 'double-model': { input: 2, output: 8, cached: 0.5 } },
    },
  })
  try {
    h.double.script([
      { text: 'Computing.', calls: [pyCall(CODE)], usage: { input: 400, output: 50, reasoning: 30 } },
      { text: 'cut', fault: { kind: 'cut-mid-stream' } },
      { text: 'It is 42.', usage: { input: 500, output: 10, cached: 400 } },
    ])
    const r = await h.agent.turn(h.sessionId, 'what is 6*7?')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(r.answer, 'It is 42.')
    // Cost from the price table: fresh input, cached input and output at their own prices.
    const cost = ((400 + 100) * 2 + 400 * 0.5 + 60 * 8) / 1e6
    assert.deepEqual(r.usage, { input: 900, output: 60, reasoning: 30, cached: 400, cost_usd: cost })
    assert.equal(r.iterations[0]!.usage?.reasoning, 30)
    const [first, , third] = h.double.requests
    assert.equal(first!.path, '/v1/responses')
    const { instructions, ...rest } = first!.body
    assert.match(instructions, /^# How you work/)
    assert.deepEqual(rest, {
      model: 'double-model',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'what is 6*7?' }] }],
      stream: true,
      store: false,
      include: ['reasoning.encrypted_content'],
      tools: [
        {
          type: 'function',
          name: 'python_execution',
          description: rest.tools[0].description,
          parameters: rest.tools[0].parameters,
          strict: false,
        },
      ],
      tool_choice: 'auto',
    })
    assert.deepEqual(third!.body.input, [
      { role: 'user', content: [{ type: 'input_text', text: 'what is 6*7?' }] },
      { role: 'assistant', content: 'Computing.' },
      {
        type: 'function_call',
        call_id: 'call_double1_0',
        name: 'python_execution',
        arguments: JSON.stringify({ code: CODE }),
      },
      { type: 'function_call_output', call_id: 'call_double1_0', output: '42\n' },
    ])
    assert.ok(h.events.some((e) => e.type === 'model.retry' && e.code === 'agent.model-unreachable'))
  } finally {
    await h.close()
  }
})

test('chat from an OpenAI-compatible server that leaves out the index and repeats id and name: each call whole, run in order', async () => {
  const h = await harness()
  try {
    h.double.script([
      { calls: [pyCall('x = 6 * 7', 'call_a'), pyCall('print(x)', 'call_b')], compatQuirks: true },
      (req) => {
        const tools = req.body.messages.filter((m: { role: string }) => m.role === 'tool')
        assert.deepEqual(
          tools.map((m: { tool_call_id: string; content: string }) => [m.tool_call_id, m.content]),
          [
            ['call_a', '(the block ran: no output, no result)'],
            ['call_b', '42\n'],
          ],
        )
        const sent = req.body.messages.find((m: { role: string }) => m.role === 'assistant').tool_calls
        assert.deepEqual(
          sent.map((c: { function: { name: string } }) => c.function.name),
          ['python_execution', 'python_execution'],
        )
        return { text: '42' }
      },
    ])
    const r = await h.agent.turn(h.sessionId, 'what is 6*7?')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(h.engine.getSession(h.sessionId).blocks.length, 2)
  } finally {
    await h.close()
  }
})

for (const model of ['openai/double-model', 'openai-responses/double-model']) {
  test(`${model.split('/')[0]}: a refusal is the answer, not an empty reply asked again`, async () => {
    const h = await harness({ config: { model } })
    try {
      h.double.script([{ refusal: "I'm sorry, I can't help with that." }])
      const r = await h.agent.turn(h.sessionId, 'do something bad')
      assert.equal(r.status, 'done', JSON.stringify(r.error))
      assert.equal(r.answer, "I'm sorry, I can't help with that.")
      assert.equal(h.double.requests.length, 1)
    } finally {
      await h.close()
    }
  })
}
