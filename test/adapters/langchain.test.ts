// vis-runtime/langchain with the real LangChain.js: a `createAgent` agent whose ChatOpenAI model
// (Chat Completions) talks to the provider double, the blocks in a real session.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ChatOpenAI } from '@langchain/openai'
import { createAgent } from 'langchain'
import { pythonTool } from '../../src/adapters/langchain.js'
import { chatToolResults, code, type Fixture, fixture, printed, session } from './fixture.js'

describe('vis-runtime/langchain', () => {
  let f: Fixture
  let model: ChatOpenAI
  before(async () => {
    f = await fixture()
    model = new ChatOpenAI({
      model: 'double-model',
      apiKey: 'sk-double',
      maxRetries: 0,
      configuration: { baseURL: f.double.openaiURL },
    })
  })
  after(() => f.close())

  const answer = (r: { messages: { content: unknown }[] }) => r.messages.at(-1)!.content

  test('two invocations on one session keep its state; the model reads output and value', {
    timeout: 120_000,
  }, async () => {
    const s = await session(f)
    const agent = createAgent({ model, tools: [pythonTool(s)] })
    f.double.script([
      { calls: [{ args: code('x = 6 * 7\nprint("set x")\nx') }] },
      { text: 'x is set' },
      { calls: [{ args: code('x + 1') }] },
      { text: 'x + 1 is 43' },
    ])
    assert.equal(answer(await agent.invoke({ messages: [{ role: 'user', content: 'set x' }] })), 'x is set')
    assert.equal(
      answer(await agent.invoke({ messages: [{ role: 'user', content: 'x + 1?' }] })),
      'x + 1 is 43',
    )
    const sent = f.double.requests.slice(-3)
    assert.deepEqual(chatToolResults(sent[0]!.body), ['set x\n\nresult: 42'])
    assert.deepEqual(chatToolResults(sent[2]!.body), ['result: 43'])
    assert.equal(f.double.remaining, 0)
  })

  test('an error comes back as the model reads it: phase, message, excerpt', {
    timeout: 120_000,
  }, async () => {
    const s = await session(f)
    const agent = createAgent({ model, tools: [pythonTool(s)] })
    f.double.script([{ calls: [{ args: code('def f():\n    return 1 / 0\n\nf()') }] }, { text: 'it failed' }])
    const r = await agent.invoke({ messages: [{ role: 'user', content: 'divide' }] })
    assert.equal(answer(r), 'it failed')
    const [result] = chatToolResults(f.double.requests.at(-1)!.body)
    assert.match(result!, /^✗ runtime error: .*ZeroDivisionError: division by zero/)
    assert.match(result!, /1 \/ 0/, 'the excerpt shows the failing line')
  })

  test("the invocation's AbortSignal interrupts the running block", { timeout: 120_000 }, async () => {
    const s = await session(f)
    // Far past the test's own timeout: only the abort can stop this block in time.
    const agent = createAgent({ model, tools: [pythonTool(s, { timeoutMs: 600_000 })] })
    f.double.script([
      {
        calls: [
          {
            args: code(
              'import time\nstarted = True\nprint("looping", flush=True)\nwhile True:\n    time.sleep(0.01)\nfinished = True',
            ),
          },
        ],
      },
      { text: 'should not be asked' },
    ])
    const ac = new AbortController()
    const interrupts: boolean[] = []
    s.events.on('interrupt', (ev) => interrupts.push(ev.landed))
    const running = printed(s, 'looping').then(() => ac.abort())
    await assert.rejects(
      agent.invoke({ messages: [{ role: 'user', content: 'loop' }] }, { signal: ac.signal }),
    )
    await running
    // The next block queues behind the interrupted one.
    const after = await s.runBlock('print(started, "finished" in globals())')
    assert.equal(after.stdout, 'True False\n')
    assert.ok(interrupts.includes(true), 'the interrupt landed in the block')
    assert.equal(f.double.remaining, 1, 'the cancelled run asked the model nothing more')
  })
})
