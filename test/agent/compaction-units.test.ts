// The pure parts of compaction: known windows and overrides, the size estimate, which provider
// refusals mean "too long", the transcript clipping and the paths a writing tool names.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { transcriptText } from '../../src/agent/compaction.js'
import {
  contextWindow,
  DEFAULT_WINDOW,
  estimateTokens,
  isContextOverflow,
} from '../../src/agent/context-window.js'
import { liveStateText, pathsIn } from '../../src/agent/live-state.js'
import type { Message } from '../../src/agent/providers/types.js'

test('context windows: the longest known prefix, an agent.json override by <provider>/<model> or <model>, else the default', () => {
  const none = { contextWindows: {} }
  assert.equal(contextWindow(none, { name: 'openai', model: 'gpt-4.1-mini-2025-04-14' }), 1_047_576)
  assert.equal(contextWindow(none, { name: 'openai', model: 'gpt-4o-mini' }), 128_000)
  assert.equal(contextWindow(none, { name: 'anthropic', model: 'claude-sonnet-4-5' }), 200_000)
  assert.equal(contextWindow(none, { name: 'ollama', model: 'llama3.1:8b' }), 131_072)
  assert.equal(contextWindow(none, { name: 'ollama', model: 'llama3:8b' }), 8_192)
  assert.equal(contextWindow(none, { name: 'vllm', model: 'Qwen/Qwen2.5-Coder-7B' }), 32_768)
  assert.equal(contextWindow(none, { name: 'openai', model: 'some-new-model' }), DEFAULT_WINDOW)
  const own = { contextWindows: { 'ollama/llama3.1:8b': 16_384, 'gpt-4o': 64_000 } }
  assert.equal(contextWindow(own, { name: 'ollama', model: 'llama3.1:8b' }), 16_384)
  assert.equal(contextWindow(own, { name: 'openai', model: 'gpt-4o' }), 64_000)
  // The provider-qualified key applies to that provider only.
  assert.equal(contextWindow(own, { name: 'vllm', model: 'llama3.1:8b' }), 131_072)
})

test('the estimate grows with the text and counts an image as a fixed amount, not its base64', () => {
  const small = estimateTokens('sys', [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], true)
  const big = estimateTokens(
    'sys',
    [{ role: 'user', content: [{ type: 'text', text: 'x'.repeat(35_000) }] }],
    true,
  )
  assert.ok(big - small >= 9_900 && big - small <= 10_100, `${small} → ${big}`)
  const image: Message = {
    role: 'tool',
    callId: 'c',
    content: [{ type: 'image', mediaType: 'image/png', data: 'A'.repeat(1_000_000) }],
  }
  assert.ok(estimateTokens('sys', [image], false) < 2_000)
})

// Each message is measured once and remembered (issue 34: the loop estimated the whole history
// before every request): a history is still the sum of what it holds now, whatever was measured
// before, and a compaction's replacement messages count at their own size.
test('the estimate of a history follows what it holds as it grows and is folded', () => {
  const text = (n: number): Message => ({ role: 'user', content: [{ type: 'text', text: 'x'.repeat(n) }] })
  const one = estimateTokens('', [text(3_500)], false)
  const history = [text(3_500)]
  assert.equal(estimateTokens('', history, false), one)
  for (let i = 0; i < 9; i++) history.push(text(3_500))
  const ten = estimateTokens('', history, false)
  assert.ok(ten >= 10 * one - 10 && ten <= 10 * one, `${one} × 10 ≠ ${ten}`)
  // The same message in two histories counts in each; a fold replaces ten by one small summary.
  assert.equal(
    estimateTokens('', [history[0]!, history[0]!], false),
    estimateTokens('', [text(3_500), text(3_500)], false),
  )
  history.splice(0, history.length, text(35))
  assert.equal(estimateTokens('', history, false), estimateTokens('', [text(35)], false))
  assert.ok(estimateTokens('', history, false) < one / 10)
})

test('context-length refusals are recognised in every wording; other 400s and 5xx are not', () => {
  const yes = [
    {
      status: 400,
      message:
        "openai answered HTTP 400: invalid_request_error: This model's maximum context length is 8192 tokens.",
    },
    {
      status: 400,
      message:
        'anthropic answered HTTP 400: invalid_request_error: prompt is too long: 210000 tokens > 200000 maximum',
    },
    {
      status: 400,
      message:
        'openai-responses answered HTTP 400: invalid_request_error: Your input exceeds the context window of this model.',
    },
    {
      status: 400,
      message:
        'openai answered HTTP 400: exceed_context_size_error: the request exceeds the available context size, try increasing it',
    },
    { status: 413, message: 'proxy answered HTTP 413: request entity too large' },
    {
      status: undefined,
      message: 'openai-responses reported an error in the stream: context_length_exceeded: too long',
    },
  ]
  for (const f of yes) assert.ok(isContextOverflow(f), f.message)
  const no = [
    {
      status: 400,
      message: 'openai answered HTTP 400: invalid_request_error: Invalid value for tool_choice',
    },
    { status: 500, message: 'openai answered HTTP 500: server_error: maximum context length' },
    { status: 429, message: 'anthropic answered HTTP 429: rate_limit_error: slow down' },
  ]
  for (const f of no) assert.ok(!isContextOverflow(f), f.message)
})

test('the transcript for the summary keeps every message when it fits, clips long ones head and tail, then drops the oldest', () => {
  const msgs: Message[] = [
    {
      role: 'assistant',
      text: 'look',
      toolCalls: [{ id: 'c1', name: 'python_execution', arguments: JSON.stringify({ code: 'print(1)' }) }],
    },
    { role: 'tool', callId: 'c1', content: [{ type: 'text', text: `HEAD${'y'.repeat(10_000)}TAIL` }] },
  ]
  const whole = transcriptText(msgs, 100_000)
  assert.match(whole, /\[block\]\nprint\(1\)/)
  assert.ok(whole.includes('y'.repeat(10_000)))
  const clipped = transcriptText(msgs, 2_000)
  assert.ok(clipped.length <= 2_100, String(clipped.length))
  assert.match(clipped, /^ASSISTANT: look/)
  assert.match(clipped, /HEAD/)
  assert.match(clipped, /TAIL$/)
  assert.match(clipped, /characters left out/)
  const many = Array.from(
    { length: 100 },
    (_, i): Message => ({ role: 'user', content: [{ type: 'text', text: `m${i} ${'z'.repeat(300)}` }] }),
  )
  const dropped = transcriptText(many, 5_000)
  assert.match(dropped, /^\[\d+ older messages left out\]/)
  assert.match(dropped, /m99/)
  assert.doesNotMatch(dropped, /m0 /)
})

test('a writing tool names its paths positionally or as path keys; the live-state note lists them', () => {
  assert.deepEqual(pathsIn(['a.py', 'text']), ['a.py'])
  assert.deepEqual(
    pathsIn([
      [
        { path: 'b.py', search: 'x', replace: 'y' },
        { path: 'c.py', from_anchor: '1:ab' },
      ],
    ]),
    ['b.py', 'c.py'],
  )
  assert.deepEqual(pathsIn([{ edits: [{ path: 'd.py' }] }]), ['d.py'])
  assert.deepEqual(pathsIn([42]), [])
  const text = liveStateText({
    functions: ['f(a, b=1)'],
    classes: ['Box()'],
    variables: [{ name: 'df', type: 'pandas.DataFrame (shape (3, 2))' }],
    modules: ['np'],
    omitted: 0,
    files_changed: ['b.py'],
  })
  assert.equal(
    text,
    'Functions: f(a, b=1)\nClasses: Box()\nVariables: df: pandas.DataFrame (shape (3, 2))\nImported modules: np\nFiles changed by host tools so far: b.py',
  )
})
