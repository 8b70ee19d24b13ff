// The loop's pure parts: what the model reads, model references and presets, retry-after,
// cost, the fenced-block fallback, templates, and the dialect translations.
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { loadAgentConfig, resolveModel } from '../../src/agent/config.js'
import { fencedBlock } from '../../src/agent/loop.js'
import { anthropicMessages } from '../../src/agent/providers/anthropic.js'
import { retryAfterMs } from '../../src/agent/providers/failure.js'
import { chatMessages } from '../../src/agent/providers/openai-chat.js'
import { clipStdout, renderBlock } from '../../src/agent/render.js'
import { costed } from '../../src/agent/usage.js'
import type { BlockView } from '../../src/engine/schemas.js'
import { type ErrorCode, isVisError } from '../../src/util/errors.js'

// Loose input: outcomes carry guest fields (phase, excerpt, hints, survived) beyond the view type.
const block = (over: Record<string, unknown>): BlockView =>
  ({
    id: 'blk_1',
    session_id: 's',
    turn_id: null,
    position: 1,
    status: 'done',
    code: '',
    stdout: '',
    result: null,
    value: null,
    error: null,
    duration_ms: 1,
    timed_out: false,
    created_at: '',
    finished_at: '',
    attachments: [],
    survived: null,
    ...over,
  }) as BlockView

test('render: clipping at exactly 65,536 characters, survived reports, hints once, attachments', () => {
  assert.equal(clipStdout('a'.repeat(65_536)), 'a'.repeat(65_536))
  assert.match(
    clipStdout('a'.repeat(65_537)),
    /\n\[vis: stdout clipped: 1 of 65,537 characters were cut\. Narrow the next block/,
  )
  const timedOut = block({
    stdout: 'partial\n',
    error: {
      code: 'block.timeout',
      phase: 'timeout',
      message: 'the block ran past its 100 ms limit and was stopped',
    },
    timed_out: true,
    survived: {
      cause: 'timeout',
      worker_replaced: true,
      intact: [],
      restored: ['load', 'CONFIG'],
      lost: ['rows'],
      cancelled: [{ tool: 'cat', call_id: 7 }],
    },
  })
  const [t] = renderBlock(timedOut, () => undefined, true)
  assert.deepEqual(t, {
    type: 'text',
    text:
      'partial\n\n✗ timeout error: the block ran past its 100 ms limit and was stopped\n' +
      'survived (timeout, the worker was replaced): intact: -; restored: load, CONFIG; lost: rows; cancelled tool calls: cat#7',
  })
  const inError = block({
    error: { code: 'block.interrupted', message: 'KeyboardInterrupt', survived: 'a background task' },
  })
  assert.match(
    (renderBlock(inError, () => undefined, true)[0] as { text: string }).text,
    /\nsurvived: a background task$/,
  )
  // A report of a shape this does not know is shown as it is.
  const odd = block({ error: { message: 'x' }, survived: { threads: 1 } })
  assert.match(
    (renderBlock(odd, () => undefined, true)[0] as { text: string }).text,
    /\nsurvived: \{"threads":1\}$/,
  )
  const hinted = block({
    error: {
      phase: 'runtime',
      message: "NameError: x\nhint: 'x' is not defined",
      excerpt: '> 1 | x',
      hints: ["'x' is not defined", 'try defs()'],
    },
  })
  assert.equal(
    (renderBlock(hinted, () => undefined, true)[0] as { text: string }).text,
    "✗ runtime error: NameError: x\nhint: 'x' is not defined\n> 1 | x\nhint: try defs()",
  )
  const att = block({
    result: { a: 1 },
    attachments: [
      { id: 'a1', block_id: 'blk_1', media_type: 'image/png', name: 'p.png', size: 3, sha256: '', url: '' },
      { id: 'a2', block_id: 'blk_1', media_type: 'text/csv', name: 'd.csv', size: 1234, sha256: '', url: '' },
    ],
  })
  const bytes = (id: string) =>
    id === 'a1' ? { mediaType: 'image/png', data: Buffer.from('png') } : undefined
  assert.deepEqual(renderBlock(att, bytes, true), [
    {
      type: 'text',
      text: 'result: {"a":1}\n[attachment p.png: image/png, 3 bytes, shown below]\n[attachment d.csv: text/csv, 1,234 bytes]',
    },
    { type: 'image', mediaType: 'image/png', data: Buffer.from('png').toString('base64') },
  ])
  // A model that takes no images is told the image exists, not sent it.
  assert.equal(renderBlock(att, bytes, false).length, 1)
  assert.deepEqual(
    renderBlock(block({}), () => undefined, true),
    [{ type: 'text', text: '(the block ran: no output, no result)' }],
  )
})

test('model references: providers, presets, keys and endpoints from the environment or agent.json', () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-agent-cfg-'))
  const config = loadAgentConfig({ home })
  assert.deepEqual(resolveModel('ollama/qwen2.5-coder:7b', config, {}), {
    provider: 'ollama',
    model: 'qwen2.5-coder:7b',
    baseURL: 'http://127.0.0.1:11434/v1',
    apiKey: 'local',
    toolCalling: true,
    images: false,
  })
  assert.equal(resolveModel('vllm/Qwen/Qwen2.5-7B', config, {}).model, 'Qwen/Qwen2.5-7B')
  assert.deepEqual(
    resolveModel(undefined, config, {
      VIS_MODEL: 'openai/gpt-4.1',
      OPENAI_API_KEY: 'k',
      OPENAI_BASE_URL: 'http://h/v1',
    }),
    {
      provider: 'openai',
      model: 'gpt-4.1',
      baseURL: 'http://h/v1',
      apiKey: 'k',
      toolCalling: true,
      images: true,
    },
  )
  assert.equal(
    resolveModel('anthropic/claude-x', config, { ANTHROPIC_API_KEY: 'a', OPENAI_API_KEY: 'o' }).apiKey,
    'a',
  )
  const refused: [string | undefined, Record<string, string>, ErrorCode][] = [
    [undefined, {}, 'agent.no-model'],
    ['gpt-4.1', {}, 'agent.bad-model'],
    ['mistral/large', {}, 'agent.bad-model'],
    ['openai/', {}, 'agent.bad-model'],
    ['anthropic/claude-x', {}, 'agent.no-api-key'],
  ]
  for (const [ref, env, code] of refused)
    assert.throws(
      () => resolveModel(ref, config, env),
      (e) => isVisError(e, code),
      String(ref),
    )
  writeFileSync(
    join(home, 'agent.json'),
    JSON.stringify({ model: 'lmstudio/m', toolCalling: false, maxIterations: 5 }),
  )
  const fromFile = loadAgentConfig({ home })
  assert.equal(fromFile.maxIterations, 5)
  assert.deepEqual(resolveModel(undefined, fromFile, {}), {
    provider: 'lmstudio',
    model: 'm',
    baseURL: 'http://127.0.0.1:1234/v1',
    apiKey: 'local',
    toolCalling: false,
    images: false,
  })
  writeFileSync(join(home, 'agent.json'), JSON.stringify({ maxIterations: 0, colour: 'red' }))
  assert.throws(
    () => loadAgentConfig({ home }),
    (e) =>
      isVisError(e, 'agent.config-invalid') && /maxIterations/.test(e.message) && /colour/.test(e.message),
  )
})

test('retry-after in seconds, as an HTTP date, and retry-after-ms', () => {
  const now = Date.parse('2026-01-01T00:00:00Z')
  assert.equal(retryAfterMs(new Headers({ 'retry-after': '3' })), 3000)
  assert.equal(retryAfterMs(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }), now), 5000)
  assert.equal(retryAfterMs(new Headers({ 'retry-after-ms': '250', 'retry-after': '9' })), 250)
  assert.equal(retryAfterMs(new Headers({ 'retry-after': 'soon' })), undefined)
  assert.equal(retryAfterMs(new Headers()), undefined)
})

test('cost: fresh and cached input and output at their prices; unknown models have none', () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-agent-cost-'))
  const config = loadAgentConfig({
    home,
    overrides: {
      prices: { 'openai/m': { input: 3, output: 15, cached: 0.3 }, other: { input: 1, output: 1 } },
    },
  })
  const u = { input: 1_000_000, output: 100_000, reasoning: 40_000, cached: 500_000 }
  assert.equal(costed(u, config, { name: 'openai', model: 'm' }).cost_usd, 1.5 + 0.15 + 1.5)
  assert.equal(costed(u, config, { name: 'vllm', model: 'other' }).cost_usd, 1.1)
  assert.equal(costed(u, config, { name: 'openai', model: 'unknown' }).cost_usd, null)
})

test('fallback: the first fenced python block of a reply', () => {
  assert.equal(fencedBlock('a\n```python\nprint(1)\n```\n```python\nprint(2)\n```'), 'print(1)\n')
  assert.equal(fencedBlock('```py\nx = 1\n```'), 'x = 1\n')
  assert.equal(fencedBlock('```bash\nls\n```'), undefined)
  assert.equal(fencedBlock('The answer is 4.'), undefined)
  // The info string's first word, in any case; attributes after it are fine.
  assert.equal(fencedBlock('```Python\nprint(3)\n```'), 'print(3)\n')
  assert.equal(fencedBlock('```python title="fix.py"\nx = 2\n```'), 'x = 2\n')
  // Not Python to run: a console transcript, a file that merely starts with "py".
  assert.equal(fencedBlock('```pycon\n>>> 1 + 1\n2\n```'), undefined)
  assert.equal(fencedBlock('```pyproject.toml\n[project]\n```'), undefined)
  assert.equal(fencedBlock('```pycon\n>>> 1\n```\n```python\nprint(5)\n```'), 'print(5)\n')
  // CRLF line ends; several openers on one line share its end; a block never closed runs nothing.
  assert.equal(fencedBlock('```python3\r\nx = 3\r\n```'), 'x = 3\r\n')
  assert.equal(fencedBlock('```py ```py \tnote\nx = 4\n```'), 'x = 4\n')
  assert.equal(fencedBlock('```python\nx = 5\n'), undefined)
  assert.equal(fencedBlock('```py '.repeat(40_000)), undefined)
})

test('dialects: images after tool results, adjacent user content merged, malformed call input kept valid', () => {
  const image = { type: 'image' as const, mediaType: 'image/png', data: 'AAA' }
  const msgs = [
    { role: 'user' as const, content: [{ type: 'text' as const, text: 'go' }] },
    {
      role: 'assistant' as const,
      text: '',
      toolCalls: [{ id: 'c1', name: 'python_execution', arguments: '{"code": "x' }],
    },
    { role: 'tool' as const, callId: 'c1', content: [{ type: 'text' as const, text: 'plot' }, image] },
    { role: 'user' as const, content: [{ type: 'text' as const, text: 'next' }] },
  ]
  assert.deepEqual(chatMessages('sys', msgs).slice(2), [
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'python_execution', arguments: '{"code": "x' } },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'plot' },
    { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAA' } }] },
    { role: 'user', content: 'next' },
  ])
  assert.deepEqual(anthropicMessages(msgs), [
    { role: 'user', content: [{ type: 'text', text: 'go' }] },
    {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'c1', name: 'python_execution', input: { code: '{"code": "x' } }],
    },
    {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'c1',
          content: [
            { type: 'text', text: 'plot' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAA' } },
          ],
        },
        { type: 'text', text: 'next' },
      ],
    },
  ])
})

test('failureKey ignores the guest LOOP prefix; RepeatedFailures counts alike failures and resets', async () => {
  const { RepeatedFailures, failureKey } = await import('../../src/agent/repeats.js')
  const e = { phase: 'runtime', message: 'ZeroDivisionError: division by zero', line: 1, column: 5 }
  assert.equal(
    failureKey(e),
    failureKey({ ...e, message: `LOOP: this exact failure happened 3 times.\n${e.message}` }),
  )
  assert.notEqual(failureKey(e), failureKey({ ...e, line: 2 }))
  assert.equal(failureKey(null), undefined)
  const r = new RepeatedFailures()
  for (let i = 0; i < 4; i++) r.note(e)
  assert.equal(r.exhausted, false)
  r.note(null)
  assert.equal(r.count, 0)
  for (let i = 0; i < 5; i++) r.note(e)
  assert.equal(r.exhausted, true)
  assert.equal(r.last, 'runtime error: ZeroDivisionError: division by zero')
})
