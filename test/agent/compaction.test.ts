// Turns longer than the context window (src/agent/compaction.ts), through real sessions against
// the provider double: compaction before a request that would fill the window, after a provider's
// context-length refusal in every dialect the double speaks, and on purpose with fold_session().
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import type { AgentEvent } from '../../src/agent/host.js'
import { type OverflowStyle, pyCall, type Recorded, type Scripted } from './double.js'
import { type Harness, harness } from './harness.js'

// The summary request is the one whose system prompt is the summariser's.
const isSummary = (req: Recorded) => JSON.stringify(req.body).includes('You summarise the earlier part')
const SUMMARY = 'SUMMARY-7f3: the numbers are in data.txt; acc holds the partial sums.'
const size = (req: Recorded) => Buffer.byteLength(JSON.stringify(req.body))
const compactions = (events: AgentEvent[]) => events.filter((e) => e.type === 'turn.compacted')

// A model that prints ~`kb` KB a block for `blocks` blocks, then answers; the summary request
// gets SUMMARY. `first` runs once, first (defining state the live-state note must name).
function chatty(blocks: number, kb: number, first?: string) {
  let ran = 0
  let setUp = first === undefined
  return (req: Recorded): Scripted => {
    if (isSummary(req)) return { text: SUMMARY }
    if (!setUp) {
      setUp = true
      return { calls: [pyCall(first!)] }
    }
    if (ran < blocks) {
      ran++
      return { text: `step ${ran}`, calls: [pyCall(`acc.append(${ran})\nprint("${ran}" * ${kb * 1024})`)] }
    }
    return { text: 'Done: the sum is 42.' }
  }
}
// `trap` would hold the worker if the live-state note ran the session's code (its __len__ or
// shape): the note is taken between blocks, under no block's deadline.
const SETUP =
  'acc = []\ndef helper(x, y=2):\n    return x * y\nclass Box:\n    pass\n' +
  'class Trap:\n    def __len__(self):\n        while True: pass\n    @property\n    def shape(self):\n        while True: pass\ntrap = Trap()\n' +
  'r = await patch([{"path": "notes.txt", "search": "old", "replace": "new"}])\nprint("ready")'

// The request the model reads after the compaction: the task, the summary, the live state.
function assertCompactedRequest(req: Recorded, task: string) {
  const text = JSON.stringify(req.body)
  assert.ok(text.includes(task), 'the task is kept verbatim')
  assert.ok(text.includes(SUMMARY), 'the summary replaces the older iterations')
  assert.ok(text.includes('Context compacted'), 'the model is told what happened')
  assert.match(text, /helper\(x, y=2\)/, 'the live state names the functions with their signatures')
  assert.match(text, /Classes: Box\(\), Trap\(\)/)
  assert.match(text, /trap: Trap[,\\]/, 'named by its type, its own code not run')
  assert.match(text, /acc: list \(len \d+\)/, 'and the variables with their types')
  assert.match(text, /Files changed by host tools so far: notes\.txt/)
}

async function withHarness(
  model: string,
  config: Record<string, unknown>,
  fn: (h: Harness) => Promise<void>,
) {
  const h = await harness({ config: { model, maxIterations: 20, ...config } })
  writeFileSync(join(h.root, 'notes.txt'), 'old\n')
  try {
    await fn(h)
  } finally {
    await h.close()
  }
}

test('a turn that fits its window is sent whole: no compaction, no summary request', async () => {
  await withHarness('openai/double-model', {}, async (h) => {
    // double-model is in no table: the default window (32k tokens) applies, and 8 × 2 KB fits.
    h.double.script([], chatty(8, 2, SETUP))
    const r = await h.agent.turn(h.sessionId, 'print big chunks, then answer')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(compactions(h.events).length, 0)
    assert.equal(h.double.requests.filter(isSummary).length, 0)
    // Each request carries the whole turn so far: the last one holds every block's output.
    assert.ok(JSON.stringify(h.double.requests.at(-1)!.body).includes('1'.repeat(2048)))
  })
})

test('over the configured window: compacted before the request, every request under the window, all iterations stored', async () => {
  // tokens; the system prompt alone is about 3k. The first turn (8 blocks of 2 KB) must pass 75%
  // of it and the next one-line turn, after the fold, stay under.
  const window = 6_400
  await withHarness(
    'openai/double-model',
    { contextWindows: { 'openai/double-model': window } },
    async (h) => {
      h.double.script([], chatty(8, 2, SETUP))
      const task = 'print big chunks, then answer'
      const r = await h.agent.turn(h.sessionId, task)
      assert.equal(r.status, 'done', JSON.stringify(r.error))
      assert.equal(r.answer, 'Done: the sum is 42.')
      const done = compactions(h.events)
      assert.ok(done.length >= 1, 'at least one compaction')
      const c = done[0]!
      assert.equal(c.reason, 'threshold')
      assert.equal(c.window, window)
      assert.ok((c.tokens_after as number) < (c.tokens_before as number), JSON.stringify(c))
      assert.equal(c.summary_error, null)
      // The model's requests (not the summaries) stay under the window, at about 3.5 bytes a token.
      const model = h.double.requests.filter((q) => !isSummary(q))
      for (const q of model) assert.ok(size(q) < window * 4.5, `request of ${size(q)} bytes`)
      const after = model.find((q) => q.at > h.double.requests.find(isSummary)!.at)!
      assertCompactedRequest(after, task)
      // The transcript keeps every iteration: setup, 8 blocks, the answer.
      assert.equal(r.iterations.length, 10)
      // The compaction is an event of the turn in the session's stored log, with the summary's usage
      // counted in the turn's.
      const stored = h.engine.replayEvents(h.sessionId, 0).events.filter((e) => e.type === 'turn.compacted')
      assert.equal(stored.length, done.length)
      assert.equal((stored[0]!.data as { turn_id: string }).turn_id, r.id)
      const iterInput = r.iterations.reduce((a, i) => a + (i.usage?.input ?? 0), 0)
      assert.equal(r.usage!.input, iterInput + 100 * done.length)

      // The session's next turn goes on from the compacted conversation: the summary, then its task.
      h.double.script([{ text: 'Still 42.' }])
      const next = await h.agent.turn(h.sessionId, 'and the sum again?')
      assert.equal(next.answer, 'Still 42.')
      const sent = h.double.requests.at(-1)!.body.messages as { role: string; content: unknown }[]
      assert.equal(sent[0]!.role, 'system')
      assert.ok(JSON.stringify(sent[1]).includes(SUMMARY), 'the compacted message opens the conversation')
      assert.deepEqual(sent.at(-1), { role: 'user', content: 'and the sum again?' })

      // After a restart the conversation is rebuilt whole from the stored rows (they kept every
      // iteration), so the first request over the window is compacted again before it is sent.
      await h.restart()
      const before = compactions(h.events).length
      // First the summary request, then the model's.
      h.double.script([{ text: SUMMARY }, { text: 'After the restart: 42.' }])
      const third = await h.agent.turn(h.sessionId, 'once more?')
      assert.equal(third.answer, 'After the restart: 42.')
      const again = compactions(h.events).slice(before)
      assert.equal(again.length, 1)
      assert.equal(again[0]!.reason, 'threshold')
      assert.equal(again[0]!.turnId, third.id)
      assert.ok(isSummary(h.double.requests.at(-2)!))
      assert.ok(size(h.double.requests.at(-1)!) < window * 4.5)
    },
  )
})

const REFUSALS: { model: string; style: OverflowStyle; says: RegExp }[] = [
  { model: 'openai/double-model', style: 'openai', says: /context_length_exceeded|maximum context length/ },
  { model: 'openai/double-model', style: 'vllm', says: /maximum context length/ },
  { model: 'openai/double-model', style: 'llamacpp', says: /exceeds the available context size/ },
  { model: 'openai-responses/double-model', style: 'openai', says: /exceeds the context window/ },
  { model: 'anthropic/double-model', style: 'openai', says: /prompt is too long/ },
]
for (const { model, style, says } of REFUSALS) {
  test(`${model} (${style}): a context-length refusal compacts and retries instead of ending the turn`, async () => {
    // The estimate thinks the window is huge; only the provider knows better.
    await withHarness(model, { contextWindows: { [model]: 1_000_000 } }, async (h) => {
      h.double.overflowStyle = style
      // Room for the first request and about three blocks' output.
      const model = chatty(6, 3, SETUP)
      h.double.script([], (req) => {
        h.double.contextBytes ??= size(req) + 10_000
        return model(req)
      })
      const first = h.double.requests.length
      const task = 'print big chunks until told otherwise'
      const r = await h.agent.turn(h.sessionId, task)
      assert.equal(r.status, 'done', JSON.stringify(r.error))
      const refused = h.double.requests.slice(first).filter((q) => q.refused)
      assert.ok(refused.length >= 1, 'the double refused a request for its size')
      const retries = h.events.filter((e) => e.type === 'model.retry' && e.compacting === true)
      assert.ok(retries.length >= 1)
      assert.match(String(retries[0]!.message), says)
      const c = compactions(h.events)
      assert.ok(c.length >= 1)
      assert.equal(c[0]!.reason, 'refused')
      // The request after the first refusal's summary is accepted and carries the summary.
      const summaryAt = h.double.requests.find(isSummary)!.at
      const next = h.double.requests.find((q) => !isSummary(q) && q.at > summaryAt)!
      assert.equal(next.refused, undefined)
      assertCompactedRequest(next, task)
      assert.equal(r.iterations.length, 8)
    })
  })
}

test('a refusal with nothing left to fold ends the turn with the provider’s reason', async () => {
  await withHarness('openai/double-model', {}, async (h) => {
    h.double.contextBytes = 1_000
    h.double.script([], { text: 'never reached' })
    const r = await h.agent.turn(h.sessionId, 'hello')
    assert.equal(r.status, 'failed')
    assert.equal(r.error?.code, 'agent.model-http-400')
    assert.match(r.error!.message, /maximum context length/)
    assert.equal(compactions(h.events).length, 0)
  })
})

test('fold_session(note) compacts after the block, keeping the note; outside a turn it is refused', async () => {
  await withHarness('anthropic/double-model', {}, async (h) => {
    const NOTE = 'NOTE-91: the bug is in parse() at line 12'
    let n = 0
    h.double.script([], (req) => {
      if (isSummary(req)) return { text: SUMMARY }
      n++
      if (n === 1) return { calls: [pyCall(SETUP)] }
      if (n === 2) return { calls: [pyCall('print("EXPLORED-" * 50)')] }
      if (n === 3) return { calls: [pyCall(`print(await fold_session(${JSON.stringify(NOTE)}))`)] }
      return { text: 'Folded and done.' }
    })
    const task = 'explore, then fold'
    const r = await h.agent.turn(h.sessionId, task)
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    const [c] = compactions(h.events)
    assert.equal(c?.reason, 'fold')
    assert.equal(c?.note, NOTE)
    const last = h.double.requests.at(-1)!
    assertCompactedRequest(last, task)
    const text = JSON.stringify(last.body)
    assert.ok(text.includes(NOTE), 'the note is kept word for word')
    assert.ok(!text.includes('EXPLORED-EXPLORED'), 'the folded iteration is gone from the request')
    // The block that folded stays verbatim, with what the tool answered.
    assert.match(text, /will be folded when this block ends/)
    assert.equal(r.iterations.length, 4)

    // A block outside any turn (the block API): nothing to fold, refused with its code.
    const b = await (await h.engine.submitBlock(h.sessionId, { code: 'await fold_session("x")' })).done
    assert.match(JSON.stringify(b.error), /agent\.fold-outside-turn|does not belong to a running turn/)
  })
})

test('the summary request failing leaves a summary the host writes: what ran, in order', async () => {
  await withHarness('openai/double-model', { contextWindows: { 'double-model': 6_000 } }, async (h) => {
    const model = chatty(6, 2, 'acc = []')
    h.double.script([], (req) =>
      isSummary(req) ? { fault: { kind: 'status', status: 400, message: 'summaries are off' } } : model(req),
    )
    const r = await h.agent.turn(h.sessionId, 'print big chunks')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    const [c] = compactions(h.events)
    assert.match(String(c?.summary_error), /summaries are off/)
    const after = h.double.requests.filter((q) => !isSummary(q)).at(-1)!
    assert.match(JSON.stringify(after.body), /No summary could be written/)
  })
})
