// The turn loop through real sessions (CPython workers, SQLite) against the provider double
// speaking the Chat Completions wire.
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { pyCall } from './double.js'
import { harness, lastChatMessage } from './harness.js'

test('a three-iteration turn reads a file with cat, fixes it with patch, and answers', async () => {
  const h = await harness()
  try {
    writeFileSync(join(h.root, 'calc.py'), 'def add(a, b):\n    return a - b\n')
    h.double.script([
      {
        text: 'Let me read it.',
        calls: [pyCall('r = await cat("calc.py")\nprint(r["content"])')],
        usage: { input: 1000, output: 30, cached: 0 },
      },
      (req) => {
        // The block's output came back as the tool result: take line 2's anchor from it.
        const content = lastChatMessage(req.body).content as string
        const anchor = /^(2:[^|]+)\|/m.exec(content)![1]!
        const edit = JSON.stringify([{ path: 'calc.py', from_anchor: anchor, replace: '    return a + b' }])
        return {
          calls: [pyCall(`r = await patch(${edit})\nprint(r)`)],
          usage: { input: 1200, output: 40, cached: 1000 },
        }
      },
      {
        text: 'Fixed: add() now returns a + b.',
        usage: { input: 1400, output: 12, cached: 1200, reasoning: 5 },
      },
    ])
    // The library surface: the session as an object.
    const session = h.agent.session(h.sessionId)
    const r = await session.turn('add() subtracts; fix calc.py')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(r.answer, 'Fixed: add() now returns a + b.')
    assert.equal(readFileSync(join(h.root, 'calc.py'), 'utf8'), 'def add(a, b):\n    return a + b\n')
    assert.equal(r.iterations.length, 3)
    assert.deepEqual(
      r.iterations.map((i) => i.block_ids.length),
      [1, 1, 0],
    )
    assert.deepEqual(
      r.iterations.map((i) => i.request_id),
      ['req_double1', 'req_double2', 'req_double3'],
    )
    assert.deepEqual(r.usage, { input: 3600, output: 82, reasoning: 5, cached: 2200, cost_usd: null })
    assert.deepEqual(r.session_usage, r.usage)

    // What the SDK sent: the one tool, streamed with usage, the history growing by appending.
    const [first, second, third] = h.double.requests.map((q) => q.body)
    assert.deepEqual(first.tools, [
      {
        type: 'function',
        function: {
          name: 'python_execution',
          description: first.tools[0].function.description,
          parameters: {
            type: 'object',
            properties: { code: { type: 'string', description: 'The Python source of the block.' } },
            required: ['code'],
            additionalProperties: false,
          },
        },
      },
    ])
    assert.equal(first.stream, true)
    assert.deepEqual(first.stream_options, { include_usage: true })
    assert.equal(first.model, 'double-model')
    assert.equal(first.messages[0].role, 'system')
    assert.match(first.messages[0].content, /## cat\(path, offset=None, n=None, \/, \*, tail=None\)/)
    assert.match(first.messages[0].content, /## patch\(edits, \/\)/)
    assert.deepEqual(first.messages[1], { role: 'user', content: 'add() subtracts; fix calc.py' })
    // The assistant turn with its call (arguments reassembled from the fragments) and the result.
    assert.deepEqual(second.messages.slice(0, 2), first.messages)
    const call = second.messages[2]
    assert.equal(call.role, 'assistant')
    assert.equal(call.content, 'Let me read it.')
    assert.deepEqual(call.tool_calls, [
      {
        id: 'call_1_0',
        type: 'function',
        function: {
          name: 'python_execution',
          arguments: pyCall('r = await cat("calc.py")\nprint(r["content"])').args,
        },
      },
    ])
    assert.equal(second.messages[3].role, 'tool')
    assert.equal(second.messages[3].tool_call_id, 'call_1_0')
    assert.match(
      second.messages[3].content,
      /^1:[0-9a-z]+\|def add\(a, b\):\n2:[0-9a-z]+\| {4}return a - b\n$/,
    )
    assert.deepEqual(third.messages.slice(0, 4), second.messages)
    assert.equal(third.messages[5].role, 'tool')
    assert.match(third.messages[5].content, /return a \+ b/)

    // Persisted: the blocks belong to their iterations; the turn reads back the same.
    const stored = h.agent.getTurn(h.sessionId, r.id)
    assert.deepEqual(session.turns(), [stored])
    assert.deepEqual(session.usage(), r.usage)
    assert.deepEqual(
      session.journal(r.id).map((c) => [c.tool, c.ok]),
      [
        ['cat', true],
        ['patch', true],
      ],
    )
    assert.deepEqual({ ...stored, session_usage: r.session_usage }, r)
    const blocks = h.engine.getSession(h.sessionId).blocks
    assert.equal(blocks.length, 2)
    assert.ok(blocks.every((b) => b.turn_id === r.id))

    // Events in order, for the library listener and the session's SSE log.
    const types = h.events.map((e) => e.type).filter((t) => t !== 'model.delta' && t !== 'block.output')
    assert.deepEqual(types, [
      'turn.started',
      'iteration.started',
      'model.reply',
      'block.started',
      'block.ended',
      'iteration.started',
      'model.reply',
      'block.started',
      'block.ended',
      'iteration.started',
      'model.reply',
      'turn.completed',
    ])
    assert.equal(
      h.events
        .filter((e) => e.type === 'model.delta')
        .map((e) => e.text)
        .join(''),
      'Let me read it.Fixed: add() now returns a + b.',
    )
    // On the session's SSE log: the turn's events, and its blocks as the engine's block events
    // carrying the turn id.
    const sse = h.engine.replayEvents(h.sessionId, 0).events
    assert.deepEqual(
      sse.filter((e) => e.type !== 'output').map((e) => [e.type, (e.data as { turn_id?: string }).turn_id]),
      [
        ['turn.started', r.id],
        ['model.delta', r.id],
        ['block.started', r.id],
        ['block.finished', undefined],
        ['block.started', r.id],
        ['block.finished', undefined],
        ['model.delta', r.id],
        ['turn.completed', r.id],
      ],
    )
  } finally {
    await h.close()
  }
})

test('the same failure five times in a row ends the turn, failed, with why; the third carries the warning', async () => {
  const h = await harness()
  try {
    // The model keeps sending the same failing block; a sixth reply would be an answer.
    h.double.script([
      ...Array.from({ length: 5 }, () => ({ calls: [pyCall('x = 1 / 0')] })),
      { text: 'never asked' },
    ])
    const r = await h.agent.turn(h.sessionId, 'divide')
    assert.equal(r.status, 'failed')
    assert.equal(r.error?.code, 'agent.repeated-failure')
    assert.match(
      r.error!.message,
      /The same failure happened 5 times in a row \(runtime error: ZeroDivisionError: division by zero\)/,
    )
    assert.equal(h.double.requests.length, 5, 'no sixth request')
    // What the model read on the third block: the guest's warning.
    assert.match(
      lastChatMessage(h.double.requests[3]!.body).content,
      /✗ runtime error: LOOP: this exact failure happened 3 times in a row/,
    )
  } finally {
    await h.close()
  }
  // A different failure in between resets the count: six failures, never five alike in a row.
  const h2 = await harness()
  try {
    h2.double.script([
      ...Array.from({ length: 3 }, () => ({ calls: [pyCall('x = 1 / 0')] })),
      { calls: [pyCall('y = undefined_name')] },
      ...Array.from({ length: 2 }, () => ({ calls: [pyCall('x = 1 / 0')] })),
      { text: 'I give up on dividing' },
    ])
    const r = await h2.agent.turn(h2.sessionId, 'divide')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(r.answer, 'I give up on dividing')
  } finally {
    await h2.close()
  }
})

// session_usage sums the turns' own usage rows (not every turn's view rebuilt at each turn's end).
test("session_usage is every finished turn's usage summed, the turn just finished included", async () => {
  const h = await harness()
  try {
    const session = h.agent.session(h.sessionId)
    const usages = [
      { input: 100, output: 10, cached: 0, reasoning: 0 },
      { input: 250, output: 20, cached: 50, reasoning: 3 },
      { input: 400, output: 7, cached: 100, reasoning: 0 },
    ]
    const seen = []
    for (const [i, usage] of usages.entries()) {
      h.double.script([{ text: `answer ${i}`, usage }])
      const r = await session.turn(`turn ${i}`)
      assert.equal(r.status, 'done', JSON.stringify(r.error))
      seen.push(r.session_usage)
    }
    const sum = (n: number) =>
      usages.slice(0, n).reduce(
        (a, u) => ({
          input: a.input + u.input,
          output: a.output + u.output,
          reasoning: a.reasoning + u.reasoning,
          cached: a.cached + u.cached,
          cost_usd: null,
        }),
        { input: 0, output: 0, reasoning: 0, cached: 0, cost_usd: null },
      )
    assert.deepEqual(seen, [sum(1), sum(2), sum(3)])
    assert.deepEqual(session.usage(), sum(3))
  } finally {
    await h.close()
  }
})

// The session's cost is the sum of its turns' costs, known only while every turn's is: a turn
// on a model without a price makes it unknown (null), though the tokens still add up.
test("session_usage's cost: summed while every turn is priced, null once one is not", async () => {
  const h = await harness({
    config: { prices: { 'openai/priced-model': { input: 1.5, output: 2 } } },
  })
  try {
    const session = h.agent.session(h.sessionId)
    const seen = []
    for (const [i, model] of ['openai/priced-model', 'openai/priced-model', 'openai/free-model'].entries()) {
      h.double.script([{ text: `answer ${i}`, usage: { input: 1000 * (i + 1), output: 10 * (i + 1) } }])
      const r = await session.turn(`turn ${i}`, { model })
      assert.equal(r.status, 'done', JSON.stringify(r.error))
      seen.push(r.session_usage)
    }
    const cost = (input: number, output: number) => (input * 1.5 + output * 2) / 1e6
    assert.deepEqual(
      seen.map((u) => u.cost_usd),
      [cost(1000, 10), Math.round((cost(1000, 10) + cost(2000, 20)) * 1e8) / 1e8, null],
    )
    assert.deepEqual(
      seen.map((u) => [u.input, u.output]),
      [
        [1000, 10],
        [3000, 30],
        [6000, 60],
      ],
    )
    assert.deepEqual(session.usage(), seen[2])
  } finally {
    await h.close()
  }
})
