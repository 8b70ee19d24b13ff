// vis-runtime/ai-sdk with the real `ai` package: generateText's tool loop (stopWhen) against the
// provider double, the blocks in a real session. What the model reads is what the double was
// sent in the tool messages.
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { createOpenAI } from '@ai-sdk/openai'
import { generateText, stepCountIs } from 'ai'
import { pythonTool } from '../../src/adapters/ai-sdk.js'
import { createEngine } from '../../src/engine/index.js'
import { chatToolResults, code, type Fixture, fixture, printed, python, session } from './fixture.js'

// The AI SDK's own OpenAI provider, speaking Chat Completions to the provider double.
const chatModel = (baseURL: string) => createOpenAI({ baseURL, apiKey: 'sk-double' }).chat('double-model')

const LOOP =
  'import time\nstarted = True\nprint("looping", flush=True)\nwhile True:\n    time.sleep(0.01)\nfinished = True'

describe('vis-runtime/ai-sdk', () => {
  let f: Fixture
  before(async () => {
    f = await fixture()
  })
  after(() => f.close())

  test('two generateText calls on one session keep its state; the model reads output and value', {
    timeout: 120_000,
  }, async () => {
    const s = await session(f)
    const model = chatModel(f.double.openaiURL)
    const tools = { python: pythonTool(s) }
    f.double.script([
      { calls: [{ name: 'python', args: code('x = 6 * 7\nprint("set x")\nx') }] },
      { text: 'x is set' },
      { calls: [{ name: 'python', args: code('x + 1') }] },
      { text: 'x + 1 is 43' },
    ])
    const first = await generateText({ model, tools, stopWhen: stepCountIs(4), prompt: 'set x' })
    assert.equal(first.text, 'x is set')
    const second = await generateText({ model, tools, stopWhen: stepCountIs(4), prompt: 'x + 1?' })
    assert.equal(second.text, 'x + 1 is 43')
    const sent = f.double.requests.slice(-3)
    // The agent loop's rendering: stdout as printed (its newline kept), then the value.
    assert.deepEqual(chatToolResults(sent[0]!.body), ['set x\n\nresult: 42'])
    assert.deepEqual(chatToolResults(sent[2]!.body), ['result: 43'])
    assert.equal(f.double.remaining, 0)
  })

  test('an error comes back as the model reads it: phase, message, excerpt', {
    timeout: 120_000,
  }, async () => {
    const s = await session(f)
    f.double.script([
      { calls: [{ name: 'python', args: code('def f():\n    return 1 / 0\n\nf()') }] },
      { text: 'it failed' },
    ])
    const r = await generateText({
      model: chatModel(f.double.openaiURL),
      tools: { python: pythonTool(s) },
      stopWhen: stepCountIs(3),
      prompt: 'divide',
    })
    assert.equal(r.text, 'it failed')
    const [result] = chatToolResults(f.double.requests.at(-1)!.body)
    assert.match(result!, /^✗ runtime error: .*ZeroDivisionError: division by zero/)
    assert.match(result!, /1 \/ 0/, 'the excerpt shows the failing line')
  })

  test('the output clip and image attachments as file parts', { timeout: 120_000 }, async () => {
    const s = await session(f)
    f.double.script([
      {
        calls: [
          {
            name: 'python',
            args: code(
              'print("y" * 500)\nvis_attach_bytes(b"\\x89PNG\\r\\n\\x1a\\n" + b"0" * 16, "dot.png")',
            ),
          },
        ],
      },
      { text: 'done' },
    ])
    await generateText({
      model: chatModel(f.double.openaiURL),
      tools: { python: pythonTool(s, { outputClip: 100, attachments: 'parts' }) },
      stopWhen: stepCountIs(3),
      prompt: 'draw',
    })
    const body = f.double.requests.at(-1)!.body
    const [result] = chatToolResults(body)
    // Chat Completions has no image in a tool message: the AI SDK's OpenAI provider sends the
    // tool's content parts as their JSON, the text part and the image part as the adapter made them.
    const parts = JSON.parse(result!) as { type: string; text?: string; data?: string; mediaType?: string }[]
    const text = parts.find((p) => p.type === 'text')?.text ?? ''
    assert.ok(
      text.startsWith(`${'y'.repeat(100)}\n[vis: stdout clipped: 401 of 501 characters were cut.`),
      text,
    )
    assert.match(text, /\[attachment dot\.png: image\/png, 24 bytes, shown below\]/)
    const image = parts.find((p) => p.type === 'image-data')
    assert.equal(image?.mediaType, 'image/png')
    assert.equal(Buffer.from(image?.data ?? '', 'base64').length, 24)
  })

  test('an AbortSignal interrupts the running block; the session carries on', {
    timeout: 120_000,
  }, async () => {
    const s = await session(f)
    f.double.script([
      {
        calls: [
          {
            name: 'python',
            args: code(LOOP),
          },
        ],
      },
    ])
    const ac = new AbortController()
    const interrupts: boolean[] = []
    s.events.on('interrupt', (ev) => interrupts.push(ev.landed))
    const running = printed(s, 'looping').then(() => ac.abort())
    const gen = generateText({
      model: chatModel(f.double.openaiURL),
      // Far past the test's own timeout: only the abort can stop this block in time.
      tools: { python: pythonTool(s, { timeoutMs: 600_000 }) },
      stopWhen: stepCountIs(3),
      prompt: 'loop',
      abortSignal: ac.signal,
    })
    await assert.rejects(gen, (err: Error) => err.name === 'AbortError' || /abort/i.test(err.message))
    await running
    // The run rejects as soon as the abort is seen; the interrupt's event follows once the worker
    // says where it landed: wait for it (polled, bounded by the test's timeout).
    while (!interrupts.includes(true)) await new Promise((r) => setTimeout(r, 10))
    assert.ok(interrupts.includes(true), 'the interrupt landed in the block')
    const after = await s.runBlock('print(started, "finished" in globals())')
    assert.equal(after.stdout, 'True False\n')
  })

  test('an engine session: the blocks are stored in its history and keep its state', {
    timeout: 120_000,
  }, async () => {
    const home = mkdtempSync(join(tmpdir(), 'vis-adapter-engine-'))
    const engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
    try {
      const { id } = await engine.createSession({ roots: [f.root] })
      const tools = { python: pythonTool({ engine, sessionId: id }) }
      f.double.script([
        { calls: [{ name: 'python', args: code('n = 20') }] },
        { calls: [{ name: 'python', args: code('n + 1') }] },
        { text: 'n + 1 is 21' },
      ])
      const r = await generateText({
        model: chatModel(f.double.openaiURL),
        tools,
        stopWhen: stepCountIs(4),
        prompt: 'count',
      })
      assert.equal(r.text, 'n + 1 is 21')
      assert.deepEqual(chatToolResults(f.double.requests.at(-1)!.body), [
        '(the block ran: no output, no result)',
        'result: 21',
      ])
      const stored = engine.getSession(id).blocks.map((b) => b.code)
      assert.deepEqual(stored, ['n = 20', 'n + 1'])

      // An abort stops the engine's block as a cancelled agent turn does: interrupted, stored so.
      f.double.script([{ calls: [{ name: 'python', args: code(LOOP) }] }])
      const ac = new AbortController()
      const off = engine.subscribe(id, (ev) => {
        if (ev.type === 'output') ac.abort()
      })
      const gen = generateText({
        model: chatModel(f.double.openaiURL),
        tools: { python: pythonTool({ engine, sessionId: id }, { timeoutMs: 600_000 }) },
        stopWhen: stepCountIs(3),
        prompt: 'loop',
        abortSignal: ac.signal,
      })
      await assert.rejects(gen)
      off()
      const after = await engine.runBlock(id, { code: 'print(started, "finished" in globals())' })
      assert.equal(after.block.stdout, 'True False\n')
      const looped = engine.getSession(id).blocks.at(-2)!
      assert.equal(looped.code, LOOP)
      assert.equal(looped.error?.code, 'block.interrupted')
    } finally {
      await engine.close()
    }
  })
})
