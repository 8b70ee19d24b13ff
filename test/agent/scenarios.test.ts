// Turns through real sessions: cancel, what the model reads after a block (clipping, errors,
// images), the fenced-block fallback, project instructions and templates.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { openStore } from '../../src/persistence/index.js'
import { isVisError } from '../../src/util/errors.js'
import { pyCall } from './double.js'
import { harness, lastChatMessage, until } from './harness.js'

test('cancel mid-block interrupts the block and ends the turn cancelled; cancel mid-request aborts it', async () => {
  const h = await harness()
  try {
    h.double.script(
      [{ calls: [pyCall('import time\nprint("working", flush=True)\nwhile True:\n    time.sleep(0.05)')] }],
      { text: 'should never be asked' },
    )
    const ac = new AbortController()
    const pending = h.agent.turn(h.sessionId, 'spin', { signal: ac.signal })
    await until('the block prints', () =>
      h.events.some((e) => e.type === 'block.output' && String(e.data).includes('working')),
    )
    ac.abort()
    const r = await pending
    assert.equal(r.status, 'cancelled')
    assert.equal(r.error?.code, 'turn.cancelled')
    assert.equal(h.double.requests.length, 1)
    const ended = h.events.find((e) => e.type === 'block.ended')
    assert.equal((ended?.error as { phase?: string })?.phase, 'interrupted')
    assert.equal(h.events.at(-1)?.type, 'turn.cancelled')
    assert.equal(h.agent.getTurn(h.sessionId, r.id).status, 'cancelled')
    // The session goes on: the next turn sees the cancelled call answered in its history.
    h.double.script([
      (req) => {
        const tool = req.body.messages.find((m: { role: string }) => m.role === 'tool')
        assert.match(tool.content, /✗ interrupted error: KeyboardInterrupt/)
        return { text: 'fresh' }
      },
    ])
    assert.equal((await h.agent.turn(h.sessionId, 'again')).answer, 'fresh')

    // Cancel while the model request is in flight (the double holds it without a byte).
    h.double.script([{ fault: { kind: 'stall-before-first-byte' } }])
    const started = await h.agent.startTurn(h.sessionId, 'wait')
    await until('the request arrives', () => h.double.requests.length === 3)
    assert.equal(h.agent.cancel(h.sessionId, started.turnId), true)
    const c = await started.done
    assert.equal(c.status, 'cancelled')
    assert.ok(!h.events.some((e) => e.type === 'model.retry'))
    assert.equal(h.agent.cancel(h.sessionId, started.turnId), false)
  } finally {
    await h.close()
  }
})

test('what the model reads: stdout clipped with a notice, errors with phase and excerpt, images as parts', async () => {
  const h = await harness()
  try {
    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
    h.double.script([
      { calls: [pyCall('print("x" * 70000)')] },
      (req) => {
        const m = lastChatMessage(req.body)
        assert.equal(
          m.content,
          `${'x'.repeat(65_536)}\n[vis: stdout clipped: 4,465 of 70,001 characters were cut. Narrow the next block: print less (a slice, a count, a summary, a grep) instead of everything.]`,
        )
        return { calls: [pyCall('total = 1\ntotal = totl + 1')] }
      },
      (req) => {
        const m = lastChatMessage(req.body)
        assert.match(m.content, /^✗ \w+ error: NameError: name 'totl' is not defined/)
        assert.match(m.content, /total = totl \+ 1/)
        assert.match(m.content, /hint: /)
        return {
          calls: [pyCall(`import base64\nvis_attach_bytes(base64.b64decode("${png}"), "dot.png")\n6 * 7`)],
        }
      },
      (req) => {
        const msgs = req.body.messages
        const tool = msgs[msgs.length - 2]
        assert.equal(tool.role, 'tool')
        assert.match(
          tool.content,
          /^result: 42\n\[attachment dot\.png: image\/png, \d+ bytes, shown below\]$/,
        )
        assert.deepEqual(msgs[msgs.length - 1], {
          role: 'user',
          content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }],
        })
        return { text: 'done' }
      },
    ])
    const r = await h.agent.turn(h.sessionId, 'show me')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(h.double.requests.length, 4)
  } finally {
    await h.close()
  }
})

test('a model without tool calling: the first fenced python block runs, a reply without one answers', async () => {
  const h = await harness({ config: { toolCalling: false } })
  try {
    h.double.script([
      {
        text: 'I will compute it.\n```python\nprint(6 * 7)\n```\nand then\n```python\nprint("second block is ignored")\n```',
      },
      { text: 'The answer is 42.' },
    ])
    const r = await h.agent.turn(h.sessionId, 'what is 6*7?')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(r.answer, 'The answer is 42.')
    const [first, second] = h.double.requests.map((q) => q.body)
    assert.equal(first.tools, undefined)
    assert.match(first.messages[0].content, /ONE fenced ```python block/)
    const said =
      'I will compute it.\n```python\nprint(6 * 7)\n```\nand then\n```python\nprint("second block is ignored")\n```'
    assert.deepEqual(second.messages.slice(2), [
      { role: 'assistant', content: said },
      { role: 'user', content: 'What your block did:\n42\n' },
    ])
    assert.equal(h.engine.getSession(h.sessionId).blocks.length, 1)
  } finally {
    await h.close()
  }
})

test('project instructions: home, then ancestors outermost first, then each root; whole; unreadable is a warning', async () => {
  const base = mkdtempSync(join(tmpdir(), 'vis-agent-instr-'))
  const outer = join(base, 'outer')
  const inner = join(outer, 'inner')
  const ws = join(inner, 'ws')
  // Roots are kept sorted by the engine; the first is the workspace.
  const other = join(base, 'zother')
  mkdirSync(ws, { recursive: true })
  mkdirSync(other)
  const long = `LONG-START ${'y'.repeat(200_000)} LONG-END`
  writeFileSync(join(outer, 'AGENTS.md'), 'OUTER-AGENTS')
  writeFileSync(join(inner, 'CLAUDE.md'), 'INNER-CLAUDE')
  writeFileSync(join(ws, 'AGENTS.md'), long)
  writeFileSync(join(ws, 'CLAUDE.md'), 'WS-CLAUDE-SHADOWED')
  writeFileSync(join(other, 'AGENTS.md'), 'OTHER-ROOT')
  // A directory where the file should be: it cannot be read.
  mkdirSync(join(base, 'AGENTS.md'))
  const h = await harness({ root: ws })
  try {
    writeFileSync(join(h.home, 'AGENTS.md'), 'HOME-AGENTS')
    const s2 = await h.engine.createSession({ roots: [ws, other] })
    const events: { type: string; path?: unknown }[] = []
    h.agent.subscribe(s2.id, (e) => events.push(e))
    h.double.script([{ text: 'ok' }])
    await h.agent.turn(s2.id, 'hi')
    const system: string = h.double.requests[0]!.body.messages[0].content
    const at = (s: string) => system.indexOf(s)
    for (const s of ['HOME-AGENTS', 'OUTER-AGENTS', 'INNER-CLAUDE', 'LONG-START', 'LONG-END', 'OTHER-ROOT']) {
      assert.ok(at(s) > 0, `${s} is in the prompt`)
    }
    assert.ok(at('HOME-AGENTS') < at('OUTER-AGENTS'))
    assert.ok(at('OUTER-AGENTS') < at('INNER-CLAUDE'))
    assert.ok(at('INNER-CLAUDE') < at('LONG-START'))
    assert.ok(at('LONG-END') < at('OTHER-ROOT'))
    assert.ok(system.includes(long), 'nothing truncated')
    assert.equal(at('WS-CLAUDE-SHADOWED'), -1)
    // The core rules and tools come before the instructions.
    assert.ok(at('# How you work') < at('# Host tools'))
    assert.ok(at('# Host tools') < at('# Project instructions'))
    const warn = events.find((e) => e.type === 'turn.warning')
    assert.equal(warn?.path, join(base, 'AGENTS.md'))
    assert.equal(at(join(base, 'AGENTS.md')), -1)
    const sse = h.engine.replayEvents(s2.id, 0).events.find((e) => e.type === 'turn.warning')
    assert.match(JSON.stringify(sse?.data), /EISDIR/)
  } finally {
    await h.close()
  }
})

test('templates: /name args from the project beats the vis home; $ARGUMENTS replaced; unknown refused', async () => {
  const h = await harness()
  try {
    mkdirSync(join(h.root, '.vis', 'prompts'), { recursive: true })
    mkdirSync(join(h.home, 'prompts'))
    writeFileSync(join(h.root, '.vis', 'prompts', 'fix.md'), 'Fix the bug in $ARGUMENTS, then say FIXED.')
    writeFileSync(join(h.home, 'prompts', 'fix.md'), 'HOME VERSION $ARGUMENTS')
    writeFileSync(join(h.home, 'prompts', 'review.md'), 'Review $ARGUMENTS carefully.')
    h.double.script([{ text: 'FIXED' }, { text: 'reviewed' }, { text: 'plain' }])
    const r = await h.agent.turn(h.sessionId, '/fix calc.py line 2')
    assert.equal(r.answer, 'FIXED')
    assert.equal(r.prompt, '/fix calc.py line 2')
    assert.deepEqual(lastChatMessage(h.double.requests[0]!.body), {
      role: 'user',
      content: 'Fix the bug in calc.py line 2, then say FIXED.',
    })
    await h.agent.turn(h.sessionId, '/review src/')
    const second = h.double.requests[1]!.body
    assert.deepEqual(lastChatMessage(second), { role: 'user', content: 'Review src/ carefully.' })
    // The session's history grows across turns.
    assert.deepEqual(
      second.messages.slice(0, 3),
      [...h.double.requests[0]!.body.messages, { role: 'assistant', content: 'FIXED' }].slice(0, 3),
    )
    await h.agent.turn(h.sessionId, '/usr/bin is missing')
    assert.deepEqual(lastChatMessage(h.double.requests[2]!.body), {
      role: 'user',
      content: '/usr/bin is missing',
    })
    await assert.rejects(h.agent.turn(h.sessionId, '/nope x'), (e) => {
      return isVisError(e, 'agent.unknown-template') && /known: \/fix, \/review/.test(e.message)
    })
    assert.equal(h.double.requests.length, 3)
  } finally {
    await h.close()
  }
})

test('turns of one session run one at a time: a second one queues until the first ends', async () => {
  const h = await harness()
  try {
    const order: string[] = []
    h.double.script([
      { calls: [pyCall('import time\nprint("first", flush=True)\ntime.sleep(0.5)')] },
      (req) => {
        order.push(lastChatMessage(req.body).role)
        return { text: 'first done' }
      },
      (req) => {
        order.push(lastChatMessage(req.body).content)
        return { text: 'second done' }
      },
    ])
    const first = await h.agent.startTurn(h.sessionId, 'one')
    const second = await h.agent.startTurn(h.sessionId, 'two')
    await until('the first block runs', () => h.events.some((e) => e.type === 'block.started'))
    const waiting = h.agent.getTurn(h.sessionId, second.turnId)
    assert.equal(waiting.status, 'queued')
    // What waits is clear: its prompt and model, the same on every read, and it is listed.
    assert.equal(waiting.prompt, 'two')
    assert.equal(waiting.model, 'openai/double-model')
    assert.deepEqual(h.agent.getTurn(h.sessionId, second.turnId), waiting)
    assert.deepEqual(
      h.agent.listTurns(h.sessionId).map((t) => [t.id, t.status]),
      [
        [first.turnId, 'running'],
        [second.turnId, 'queued'],
      ],
    )
    assert.equal(h.agent.getTurn(h.sessionId, first.turnId).status, 'running')
    assert.equal((await first.done).answer, 'first done')
    assert.equal((await second.done).answer, 'second done')
    // The second turn's request came after the first turn's last one, and carried its history.
    assert.deepEqual(order, ['tool', 'two'])
    const third = h.double.requests[2]!.body.messages
    assert.deepEqual(third.slice(-2), [
      { role: 'assistant', content: 'first done' },
      { role: 'user', content: 'two' },
    ])
    assert.deepEqual(
      h.agent.listTurns(h.sessionId).map((t) => [t.position, t.status]),
      [
        [1, 'done'],
        [2, 'done'],
      ],
    )
  } finally {
    await h.close()
  }
})

test('a cancel that comes before the block has started still stops it', { timeout: 120_000 }, async () => {
  const h = await harness()
  try {
    h.double.script([{ calls: [pyCall('import time\nwhile True:\n    time.sleep(0.05)')] }], {
      text: 'never',
    })
    const ac = new AbortController()
    // Cancelled the moment the block is submitted: its Python has not started yet.
    h.agent.subscribe(h.sessionId, (e) => {
      if (e.type === 'block.started') ac.abort()
    })
    const r = await h.agent.turn(h.sessionId, 'spin', { signal: ac.signal })
    assert.equal(r.status, 'cancelled')
    const [b] = h.engine.getSession(h.sessionId).blocks
    assert.equal(b?.status, 'done')
    assert.equal((b?.error as { phase?: string })?.phase, 'interrupted')
    assert.equal(h.double.requests.length, 1)
  } finally {
    await h.close()
  }
})

test('closing the engine cancels a running turn and stores it as cancelled', {
  timeout: 120_000,
}, async () => {
  const h = await harness()
  h.double.script([
    { calls: [pyCall('import time\nprint("up", flush=True)\nwhile True:\n    time.sleep(0.05)')] },
  ])
  const started = await h.agent.startTurn(h.sessionId, 'spin')
  await until('the block prints', () => h.events.some((e) => e.type === 'block.output'))
  await h.close()
  const r = await started.done
  assert.equal(r.status, 'cancelled')
  const store = openStore({ home: h.home })
  try {
    assert.equal(store.turns.require(r.id).status, 'cancelled')
  } finally {
    store.close()
  }
})
