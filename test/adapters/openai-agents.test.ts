// vis-runtime/openai-agents with the real @openai/agents: the SDK's run() with tracing off, its
// default Responses model talking to the provider double over the Responses API's stream, the
// blocks in a real session.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Agent, OpenAIResponsesModel, run, setTracingDisabled } from '@openai/agents'
import OpenAI from 'openai'
import { pythonTool } from '../../src/adapters/openai-agents.js'
import { code, type Fixture, fixture, printed, responsesToolResults, session } from './fixture.js'

setTracingDisabled(true)

describe('vis-runtime/openai-agents', () => {
  let f: Fixture
  let model: OpenAIResponsesModel
  before(async () => {
    f = await fixture()
    model = new OpenAIResponsesModel(
      // The same class: the SDK's types name its CommonJS build, this file the ESM one.
      new OpenAI({
        baseURL: f.double.openaiURL,
        apiKey: 'sk-double',
        maxRetries: 0,
      }) as unknown as ConstructorParameters<typeof OpenAIResponsesModel>[0],
      'double-model',
    )
  })
  after(() => f.close())

  // A streamed run to its end (the double speaks the streaming wire).
  async function streamed(agent: Agent, input: string, signal?: AbortSignal) {
    const result = await run(agent, input, { stream: true, ...(signal ? { signal } : {}) })
    for await (const _ of result.toTextStream()) {
      // drained: the run advances as its stream is read
    }
    await result.completed
    if (result.error) throw result.error
    return result
  }
  const ran = async (agent: Agent, input: string) => (await streamed(agent, input)).finalOutput

  test('two runs on one session keep its state; the model reads output and value', {
    timeout: 120_000,
  }, async () => {
    const s = await session(f)
    const agent = new Agent({ name: 'coder', instructions: 'Use Python.', model, tools: [pythonTool(s)] })
    f.double.script([
      { calls: [{ args: code('x = 6 * 7\nprint("set x")\nx') }] },
      { text: 'x is set' },
      { calls: [{ args: code('x + 1') }] },
      { text: 'x + 1 is 43' },
    ])
    assert.equal(await ran(agent, 'set x'), 'x is set')
    assert.equal(await ran(agent, 'x + 1?'), 'x + 1 is 43')
    const sent = f.double.requests.slice(-3)
    assert.equal(sent[0]!.dialect, 'responses')
    assert.deepEqual(responsesToolResults(sent[0]!.body), ['set x\n\nresult: 42'])
    assert.deepEqual(responsesToolResults(sent[2]!.body), ['result: 43'])
    assert.equal(f.double.remaining, 0)
  })

  test('an error comes back as the model reads it: phase, message, excerpt', {
    timeout: 120_000,
  }, async () => {
    const s = await session(f)
    const agent = new Agent({ name: 'coder', model, tools: [pythonTool(s)] })
    f.double.script([{ calls: [{ args: code('def f():\n    return 1 / 0\n\nf()') }] }, { text: 'it failed' }])
    assert.equal(await ran(agent, 'divide'), 'it failed')
    const [result] = responsesToolResults(f.double.requests.at(-1)!.body) as string[]
    assert.match(result!, /^✗ runtime error: .*ZeroDivisionError: division by zero/)
    assert.match(result!, /1 \/ 0/, 'the excerpt shows the failing line')
  })

  test('a session that cannot run the block: the model reads why, the run goes on', {
    timeout: 120_000,
  }, async () => {
    const s = await session(f)
    await s.dispose()
    const agent = new Agent({ name: 'coder', model, tools: [pythonTool(s)] })
    f.double.script([{ calls: [{ args: code('print(1)') }] }, { text: 'the session is gone' }])
    assert.equal(await ran(agent, 'print'), 'the session is gone')
    const [result] = responsesToolResults(f.double.requests.at(-1)!.body) as string[]
    assert.equal(result, `✗ session.disposed error: session ${s.id} is disposed`)
  })

  test("the run's AbortSignal, given to the tool, interrupts the running block", {
    timeout: 120_000,
  }, async () => {
    const s = await session(f)
    const ac = new AbortController()
    // Far past the test's own timeout: only the abort can stop this block in time.
    const agent = new Agent({
      name: 'coder',
      model,
      tools: [pythonTool(s, { signal: ac.signal, timeoutMs: 600_000 })],
    })
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
    const interrupts: boolean[] = []
    s.events.on('interrupt', (ev) => interrupts.push(ev.landed))
    const running = printed(s, 'looping').then(() => ac.abort())
    const result = await streamed(agent, 'loop', ac.signal)
    await running
    assert.equal(result.cancelled, true, 'the run ends cancelled')
    // The SDK ends a cancelled stream without waiting for its tool: the next block queues
    // behind the interrupted one.
    const after = await s.runBlock('print(started, "finished" in globals())')
    assert.equal(after.stdout, 'True False\n')
    assert.ok(interrupts.includes(true), 'the interrupt landed in the block')
    assert.equal(f.double.remaining, 1, 'the cancelled run asked the model nothing more')
  })
})
