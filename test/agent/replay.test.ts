// A session's conversation rebuilt after a real engine restart (a new engine and agent on the same
// home): the first turn after it sends exactly what an unbroken process sends, byte for byte, in
// each dialect: every earlier prompt, every reply with its tool calls and its reasoning (Anthropic
// thinking with signatures, Responses reasoning items), what each block did (rendered again from
// the stored block), refused calls, the iteration cap's notice, fenced-block results.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import type { AgentConfigFile } from '../../src/agent/config.js'
import { pyCall, type Recorded, type Scripted } from './double.js'
import { type Harness, harness } from './harness.js'

const CODE = 'x = 6 * 7\nprint(x)'
const SIG = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds-signature=='
const REDACTED = 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP-redacted=='

type Scenario = {
  config: Partial<AgentConfigFile>
  anthropic?: { thinking: { budget_tokens: number } }
  script: Scripted[]
  // Options of the first turn, and its prompt (default: what is 6*7?).
  first?: { maxIterations?: number }
  prompt?: string
  // Rewrites the stored rows before the restart (rows an older host wrote).
  beforeRestart?: (db: Harness['engine']['store']['db']) => void
}

// The session's two turns, the host restarted between them or not; every request the double saw.
// Both runs use one root, so their system prompts match too.
async function run(s: Scenario, restart: boolean, root: string): Promise<Recorded[]> {
  const h = await harness({ config: s.config, root, ...(s.anthropic ? { anthropic: s.anthropic } : {}) })
  try {
    h.double.script(s.script)
    const r1 = await h.agent.turn(h.sessionId, s.prompt ?? 'what is 6*7?', s.first ?? {})
    assert.equal(r1.status, 'done', JSON.stringify(r1.error))
    if (restart) {
      s.beforeRestart?.(h.engine.store.db)
      await h.restart()
    }
    const r2 = await h.agent.turn(h.sessionId, 'and again?')
    assert.equal(r2.status, 'done', JSON.stringify(r2.error))
    assert.equal(h.double.remaining, 0)
    return h.double.requests
  } finally {
    await h.close()
  }
}

// The last request (the second turn's) after a restart, checked equal to the unbroken process's.
async function afterRestart(
  s: Scenario,
  root = mkdtempSync(join(tmpdir(), 'vis-replay-root-')),
): Promise<Recorded> {
  const live = await run(s, false, root)
  const restored = await run(s, true, root)
  assert.equal(restored.length, live.length)
  const [a, b] = [live.at(-1)!, restored.at(-1)!]
  assert.deepEqual(b.body, a.body)
  // Byte for byte: the same keys in the same order (reasoning as the provider streamed it).
  assert.equal(JSON.stringify(b.body), JSON.stringify(a.body))
  return b
}

test('anthropic after a restart: the earlier turn comes back whole, its thinking blocks verbatim with their signatures', async () => {
  const req = await afterRestart({
    config: { model: 'anthropic/double-model' },
    anthropic: { thinking: { budget_tokens: 2048 } },
    script: [
      {
        thinking: [{ thinking: 'Multiply, then print.', signature: SIG }, { redacted: REDACTED }],
        text: 'Let me compute.',
        calls: [pyCall(CODE)],
      },
      { text: 'It is 42.' },
      { text: 'Still 42.' },
    ],
  })
  const m = req.body.messages
  assert.equal(m.length, 5)
  const callId = m[1].content.at(-1).id
  assert.deepEqual(m[1].content, [
    { type: 'thinking', thinking: 'Multiply, then print.', signature: SIG },
    { type: 'redacted_thinking', data: REDACTED },
    { type: 'text', text: 'Let me compute.' },
    { type: 'tool_use', id: callId, name: 'python_execution', input: { code: CODE } },
  ])
  assert.deepEqual(m[2].content, [
    { type: 'tool_result', tool_use_id: callId, content: [{ type: 'text', text: '42\n' }] },
  ])
  assert.deepEqual(m[3], { role: 'assistant', content: [{ type: 'text', text: 'It is 42.' }] })
})

test('responses after a restart: reasoning items, function calls and their outputs come back in place', async () => {
  const req = await afterRestart({
    config: { model: 'openai-responses/double-model' },
    script: [
      { reasoning: { summary: 'Multiply, then print.', encrypted: 'gAAAA-one==' }, calls: [pyCall(CODE)] },
      { reasoning: { summary: 'It printed 42.', encrypted: 'gAAAA-two==' }, text: 'It is 42.' },
      { text: 'Still 42.' },
    ],
  })
  const types = req.body.input.map((i: any) => i.type ?? i.role)
  assert.deepEqual(types, [
    'user',
    'reasoning',
    'function_call',
    'function_call_output',
    'reasoning',
    'assistant',
    'user',
  ])
  assert.equal(req.body.input[1].encrypted_content, 'gAAAA-one==')
  assert.equal(req.body.input[3].output, '42\n')
})

test('chat after a restart: an empty reply left out, a refused call, the block results and the iteration cap notice come back as they were sent', async () => {
  const req = await afterRestart({
    config: { model: 'openai/double-model' },
    first: { maxIterations: 3 },
    script: [
      // A call whose arguments are cut (not JSON), then a good one, in one reply.
      { calls: [{ args: '{"code": "print(', id: 'call_bad' }, pyCall(CODE, 'call_good')] },
      // An empty reply: not appended, the model is asked again.
      {},
      { calls: [pyCall('print(x + 1)', 'call_next')] },
      // The cap: asked once more without tools.
      { text: 'x is 42, then 43.' },
      { text: 'Still 42.' },
    ],
  })
  const m = req.body.messages.slice(1)
  const roles = m.map((x: any) => x.role)
  assert.deepEqual(roles, [
    'user',
    'assistant',
    'tool',
    'tool',
    'assistant',
    'tool',
    'user',
    'assistant',
    'user',
  ])
  assert.match(m[2].content, /^✗ tool-call error: the arguments were not valid JSON/)
  assert.equal(m[3].content, '42\n')
  assert.equal(m[5].content, '43\n')
  assert.match(m[6].content, /You have used all 3 iterations of this turn/)
})

for (const legacy of [false, true]) {
  test(`fenced blocks after a restart${legacy ? ' (rows of an older host, without tool_calling)' : ''}: a model without tool calling reads its block results as user messages again`, async () => {
    const req = await afterRestart({
      ...(legacy
        ? {
            beforeRestart: (db) =>
              db
                .prepare(
                  "UPDATE turns SET request = json_object('prompt', json_extract(request, '$.prompt'))",
                )
                .run(),
          }
        : {}),
      config: { model: 'openai/double-model', toolCalling: false },
      script: [
        { text: 'Running it:\n```python\nprint(6 * 7)\n```' },
        { text: 'It is 42.' },
        { text: 'Still 42.' },
      ],
    })
    const m = req.body.messages.slice(1)
    assert.deepEqual(
      m.map((x: any) => [x.role, typeof x.content === 'string' ? x.content : x.content[0].text]),
      [
        ['user', 'what is 6*7?'],
        ['assistant', 'Running it:\n```python\nprint(6 * 7)\n```'],
        ['user', 'What your block did:\n42\n'],
        ['assistant', 'It is 42.'],
        ['user', 'and again?'],
      ],
    )
    assert.equal('tools' in req.body, false)
  })
}

test('anthropic after a restart: a template expanded prompt, an error, and an image attachment come back as they were sent', async () => {
  const png =
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
  const root = mkdtempSync(join(tmpdir(), 'vis-replay-root-'))
  mkdirSync(join(root, '.vis', 'prompts'), { recursive: true })
  writeFileSync(join(root, '.vis', 'prompts', 'show.md'), 'Draw $ARGUMENTS and show it.')
  const req = await afterRestart(
    {
      config: { model: 'anthropic/double-model' },
      prompt: '/show a dot',
      script: [
        { calls: [pyCall('total = totl + 1')] },
        { calls: [pyCall(`import base64\nvis_attach_bytes(base64.b64decode("${png}"), "dot.png")\n6 * 7`)] },
        { text: 'Here is the dot.' },
        { text: 'Still a dot.' },
      ],
    },
    root,
  )
  const m = req.body.messages
  assert.deepEqual(m[0], { role: 'user', content: [{ type: 'text', text: 'Draw a dot and show it.' }] })
  assert.match(m[2].content[0].content[0].text, /^✗ \w+ error: NameError: name 'totl' is not defined/)
  const shown = m[4].content[0].content
  assert.match(shown[0].text, /^result: 42\n\[attachment dot\.png: image\/png, \d+ bytes, shown below\]$/)
  assert.deepEqual(shown[1], {
    type: 'image',
    source: { type: 'base64', media_type: 'image/png', data: png },
  })
})
