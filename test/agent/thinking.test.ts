// Anthropic extended thinking through the loop: with thinking on (providers.anthropic.thinking),
// the thinking and redacted_thinking blocks a reply streamed go back verbatim, in order, with
// their signatures, in the assistant message of the next request (the one carrying the tool
// results; the API refuses it otherwise) and in the session's later turns, and are stored with
// their iteration. Without thinking the requests are as before. Bad thinking config is refused.
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { loadAgentConfig } from '../../src/agent/config.js'
import { isVisError } from '../../src/util/errors.js'
import { pyCall, type Recorded, type Scripted } from './double.js'
import { harness, storedReasoning } from './harness.js'

const CODE = 'x = 6 * 7\nprint(x)'
const SIG1 = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds-signature-one=='
const SIG3 = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds-signature-three=='
const REDACTED = 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP-redacted=='

// What a thinking model streams: thinking (and a redacted block) before its first call; after a
// tool result no new thinking until the next prompt, as the API documents.
const script = (): Scripted[] => [
  {
    thinking: [{ thinking: 'Multiply, then print the product.', signature: SIG1 }, { redacted: REDACTED }],
    text: 'Let me compute.',
    calls: [pyCall(CODE)],
  },
  { text: 'It is 42.' },
  { thinking: [{ thinking: 'The same product again.', signature: SIG3 }], text: 'Still 42.' },
]

const thinking1 = { type: 'thinking', thinking: 'Multiply, then print the product.', signature: SIG1 }
const redacted1 = { type: 'redacted_thinking', data: REDACTED }
const toolUse = (id: string) => ({ type: 'tool_use', id, name: 'python_execution', input: { code: CODE } })

test('anthropic thinking: the blocks of a reply go back verbatim, in order, with their signatures, and are stored with their iteration', async () => {
  const h = await harness({
    config: { model: 'anthropic/double-model' },
    anthropic: { thinking: { budget_tokens: 2048 } },
  })
  try {
    h.double.script(script())
    const r = await h.agent.turn(h.sessionId, 'what is 6*7?')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(r.answer, 'It is 42.')
    const [first, second] = h.double.requests as [Recorded, Recorded]
    assert.deepEqual(first.body.thinking, { type: 'enabled', budget_tokens: 2048 })
    assert.equal(first.body.max_tokens, 16_000)
    const callId = second.body.messages[1].content.at(-1).id as string
    assert.deepEqual(second.body.messages, [
      { role: 'user', content: [{ type: 'text', text: 'what is 6*7?' }] },
      {
        role: 'assistant',
        content: [thinking1, redacted1, { type: 'text', text: 'Let me compute.' }, toolUse(callId)],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: callId,
            content: [{ type: 'text', text: '42\n' }],
            cache_control: { type: 'ephemeral' },
          },
        ],
      },
    ])
    // Byte for byte: the thinking text reassembled from its deltas, the signature, key order.
    const sent = second.body.messages[1].content
    assert.equal(JSON.stringify(sent[0]), JSON.stringify(thinking1))
    assert.equal(JSON.stringify(sent[1]), JSON.stringify(redacted1))

    // Stored with the iteration that received them; the answer's iteration had none.
    assert.deepEqual(storedReasoning(h, r.id), [[thinking1, redacted1], null])

    // The session's next turn carries them too (the API keeps or drops earlier turns' thinking
    // itself; sending it keeps the prefix the same, so the prompt cache still matches).
    const r2 = await h.agent.turn(h.sessionId, 'and again?')
    assert.equal(r2.answer, 'Still 42.')
    const third = h.double.requests[2]!
    assert.deepEqual(third.body.messages.slice(0, 2), second.body.messages.slice(0, 2))
    assert.deepEqual(third.body.messages.slice(3), [
      { role: 'assistant', content: [{ type: 'text', text: 'It is 42.' }] },
      {
        role: 'user',
        content: [{ type: 'text', text: 'and again?', cache_control: { type: 'ephemeral' } }],
      },
    ])
    assert.deepEqual(storedReasoning(h, r2.id), [
      [{ type: 'thinking', thinking: 'The same product again.', signature: SIG3 }],
    ])
  } finally {
    await h.close()
  }
})

test('anthropic without thinking: no thinking parameter, and the requests carry no thinking blocks', async () => {
  const h = await harness({ config: { model: 'anthropic/double-model' } })
  try {
    // The same script: the double streams thinking only when the request turned it on.
    h.double.script(script())
    const r = await h.agent.turn(h.sessionId, 'what is 6*7?')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    const [first, second] = h.double.requests as [Recorded, Recorded]
    assert.equal('thinking' in first.body, false)
    const callId = second.body.messages[1].content.at(-1).id as string
    assert.deepEqual(second.body.messages[1], {
      role: 'assistant',
      content: [{ type: 'text', text: 'Let me compute.' }, toolUse(callId)],
    })
    assert.deepEqual(storedReasoning(h, r.id), [null, null])
  } finally {
    await h.close()
  }
})

test('thinking config: a budget under 1024, one not below maxTokens, or thinking on a provider other than anthropic is refused by name', () => {
  const cases: [unknown, RegExp][] = [
    [
      { anthropic: { thinking: { budget_tokens: 512 } } },
      /providers\.anthropic\.thinking\.budget_tokens: .*1024/,
    ],
    [
      { anthropic: { maxTokens: 4000, thinking: { budget_tokens: 4000 } } },
      /providers\.anthropic\.thinking\.budget_tokens: must be below maxTokens \(4000\)/,
    ],
    [
      { anthropic: { thinking: { budget_tokens: 16_000 } } },
      /providers\.anthropic\.thinking\.budget_tokens: must be below maxTokens \(16000\)/,
    ],
    [
      { openai: { thinking: { budget_tokens: 2048 } } },
      /providers\.openai\.thinking: only the anthropic provider/,
    ],
    [{ anthropic: { thinking: { budget: 2048 } } }, /providers\.anthropic\.thinking: Unrecognized key/],
    [
      { anthropic: { thinking: {} } },
      /providers\.anthropic\.thinking\.budget_tokens: required when thinking is enabled/,
    ],
    [
      { anthropic: { thinking: { type: 'adaptive', budget_tokens: 2048 } } },
      /providers\.anthropic\.thinking\.budget_tokens: adaptive thinking takes no budget/,
    ],
    [
      { anthropic: { thinking: { type: 'always' } } },
      /providers\.anthropic\.thinking\.type: Invalid enum value/,
    ],
  ]
  for (const [providers, why] of cases) {
    const home = mkdtempSync(join(tmpdir(), 'vis-thinking-config-'))
    writeFileSync(join(home, 'agent.json'), JSON.stringify({ providers }))
    assert.throws(
      () => loadAgentConfig({ home }),
      (err: unknown) => isVisError(err, 'agent.config-invalid') && why.test((err as Error).message),
      JSON.stringify(providers),
    )
  }
  // Allowed: a budget in range reaches the model spec.
  const home = mkdtempSync(join(tmpdir(), 'vis-thinking-config-'))
  writeFileSync(
    join(home, 'agent.json'),
    JSON.stringify({
      providers: { anthropic: { apiKey: 'k', maxTokens: 32_000, thinking: { budget_tokens: 8000 } } },
    }),
  )
  const config = loadAgentConfig({ home })
  assert.deepEqual(config.providers.anthropic?.thinking, { type: 'enabled', budget_tokens: 8000 })
  writeFileSync(
    join(home, 'agent.json'),
    JSON.stringify({ providers: { anthropic: { thinking: { type: 'adaptive' } } } }),
  )
  assert.deepEqual(loadAgentConfig({ home }).providers.anthropic?.thinking, { type: 'adaptive' })
})

// Thinking on by the parameter's adaptive form, or by a model that thinks by default and streams
// thinking without any parameter: either way the blocks go back.
const modes = [
  { name: 'adaptive thinking: the parameter is sent as adaptive', thinking: { type: 'adaptive' as const } },
  { name: 'a model that thinks by default: no thinking parameter is sent', alwaysThinks: true },
]
for (const mode of modes) {
  test(`anthropic ${mode.name}, and the blocks go back all the same`, async () => {
    const h = await harness({
      config: { model: 'anthropic/double-model' },
      ...(mode.thinking ? { anthropic: { thinking: mode.thinking } } : {}),
    })
    try {
      h.double.script(
        script()
          .slice(0, 2)
          .map((r) => ({ ...r, alwaysThinks: mode.alwaysThinks ?? false })),
      )
      const r = await h.agent.turn(h.sessionId, 'what is 6*7?')
      assert.equal(r.status, 'done', JSON.stringify(r.error))
      const [first, second] = h.double.requests as [Recorded, Recorded]
      assert.deepEqual(first.body.thinking, mode.thinking)
      assert.deepEqual(second.body.messages[1].content.slice(0, 2), [thinking1, redacted1])
    } finally {
      await h.close()
    }
  })
}

test('thinking goes back only to the model that wrote it: another model of the session is sent the turn without it', async () => {
  const h = await harness({
    config: { model: 'anthropic/double-model' },
    anthropic: { thinking: { budget_tokens: 2048 } },
  })
  try {
    h.double.script([...script().slice(0, 2), { text: 'Other: 42.' }, { text: 'Back: 42.' }])
    const r1 = await h.agent.turn(h.sessionId, 'what is 6*7?')
    assert.equal(r1.status, 'done', JSON.stringify(r1.error))
    const callId = h.double.requests[1]!.body.messages[1].content.at(-1).id as string
    const r2 = await h.agent.turn(h.sessionId, 'and on another model?', { model: 'anthropic/other-model' })
    assert.equal(r2.answer, 'Other: 42.')
    const other = h.double.requests[2]!
    assert.equal(other.body.model, 'other-model')
    // Its signature is bound to double-model: left out, the rest of the reply kept.
    assert.deepEqual(other.body.messages[1].content, [
      { type: 'text', text: 'Let me compute.' },
      toolUse(callId),
    ])
    // Back on the model that wrote it, the thinking is sent again, verbatim.
    const r3 = await h.agent.turn(h.sessionId, 'and back?')
    assert.equal(r3.answer, 'Back: 42.')
    const back = h.double.requests[3]!
    assert.equal(back.body.model, 'double-model')
    assert.deepEqual(back.body.messages[1].content.slice(0, 2), [thinking1, redacted1])
  } finally {
    await h.close()
  }
})

test("anthropic thinking: thinking tokens count as the turn's reasoning (within output), cache reads as cached, and cost", async () => {
  const h = await harness({
    config: {
      model: 'anthropic/double-model',
      prices: { 'anthropic/double-model': { input: 3, output: 15, cached: 0.3 } },
    },
    anthropic: { thinking: { budget_tokens: 2048 } },
  })
  try {
    const [first, second] = script()
    h.double.script([
      { ...first, usage: { input: 1000, cached: 600, output: 300, reasoning: 120 } },
      { ...second, usage: { input: 1100, cached: 1000, output: 40 } },
    ])
    const r = await h.agent.turn(h.sessionId, 'what is 6*7?')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.deepEqual(
      r.iterations.map((i) => [i.usage?.input, i.usage?.cached, i.usage?.output, i.usage?.reasoning]),
      [
        [1000, 600, 300, 120],
        [1100, 1000, 40, 0],
      ],
    )
    const cost = ((400 + 100) * 3 + 1600 * 0.3 + 340 * 15) / 1e6
    assert.deepEqual(r.usage, { input: 2100, output: 340, reasoning: 120, cached: 1600, cost_usd: cost })
  } finally {
    await h.close()
  }
})
