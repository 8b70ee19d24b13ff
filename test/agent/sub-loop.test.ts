// sub_loop() (issue 31 §1): child turns on forks of the session, run from a block, against the
// provider double in each dialect. Replies are routed by what each request carries (the double
// serves the parent and its children concurrently), never by arrival order.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Recorded, Scripted } from './double.js'
import { pyCall } from './double.js'
import { harness, until } from './harness.js'

const MODELS = {
  chat: 'openai/double-model',
  anthropic: 'anthropic/claude-double',
  responses: 'openai-responses/double-model',
} as const

// The parent fans out three children with gather; each child reads a definition the parent's
// session made before the turn, and answers. Markers the model "sees" only in block output
// ("saw-A", "ANSWERS") are built by concatenation so the code that prints them does not hold them.
function route(req: Recorded): Scripted {
  const b = JSON.stringify(req.body)
  // The parent's own requests carry the children's prompts (in its code): it is routed first.
  if (b.includes('PARENT-TASK')) {
    if (b.includes('ANSWERS')) return { text: 'parent done', usage: { input: 100, output: 5 } }
    return {
      calls: [
        pyCall(
          'r = await gather(sub_loop("CHILD-A-TASK"), sub_loop("CHILD-B-TASK"), sub_loop("CHILD-C-TASK"))\nprint("ANS" + "WERS", r)',
        ),
      ],
      usage: { input: 100, output: 5 },
    }
  }
  for (const k of ['A', 'B', 'C']) {
    if (b.includes(`CHILD-${k}-TASK`)) {
      if (b.includes(`saw-${k}`)) return { text: `answer-${k}`, usage: { input: 10, output: 1 } }
      return {
        calls: [pyCall(`print("saw" + "-${k}", BASE + ${k.charCodeAt(0) - 65})`)],
        usage: { input: 10, output: 1 },
      }
    }
  }
  return { text: 'unrouted' }
}

for (const [dialect, model] of Object.entries(MODELS)) {
  test(`${dialect}: three sub_loops under gather answer the parent; the turns form a tree with rolled-up usage`, async () => {
    const h = await harness({
      config: { model, subLoops: { concurrency: 2, timeoutMs: 600_000, maxDepth: 2 } },
    })
    try {
      h.double.script([], (req) => route(req))
      // A definition of the parent's session before the turn: its children start with it.
      const pre = await h.engine.runBlock(h.sessionId, { code: 'BASE = 40' })
      assert.equal(pre.block.status, 'done')
      const r = await h.agent.turn(h.sessionId, 'PARENT-TASK: ask three helpers')
      assert.equal(r.status, 'done', JSON.stringify(r.error))
      assert.equal(r.answer, 'parent done')
      const block = h.engine.getBlock(r.iterations[0]!.block_ids[0]!)
      assert.equal(
        block.stdout,
        "ANSWERS ['answer-A', 'answer-B', 'answer-C']\n",
        JSON.stringify(block.error),
      )

      // The tree: three children, each a turn of its own (closed) session naming its parent.
      assert.equal(r.children.length, 3)
      const kids = r.children.map((c) => h.agent.getTurn(c.session_id, c.turn_id))
      for (const [i, kid] of kids.entries()) {
        assert.equal(kid.status, 'done')
        assert.notEqual(kid.session_id, h.sessionId)
        assert.deepEqual(kid.parent, { session_id: h.sessionId, turn_id: r.id, block_id: block.id })
        assert.equal(h.engine.sessionView(kid.session_id).state, 'closed')
        // Each child read the parent's definition in its own worker.
        const out = h.engine.getBlock(kid.iterations[0]!.block_ids[0]!).stdout
        assert.match(out ?? '', /^saw-[ABC] 4[012]\n$/, `child ${i}`)
      }
      assert.deepEqual(kids.map((k) => k.answer).sort(), ['answer-A', 'answer-B', 'answer-C'])
      // Usage rolls up: the parent's two requests and each child's two.
      assert.equal(r.usage!.input, 200)
      assert.equal(r.tree_usage!.input, 200 + 3 * 20)
      assert.equal(r.tree_usage!.output, 10 + 3 * 2)
      // At most two children ran at once: the last to start started after one had finished.
      const byStart = [...kids].sort((a, b) => a.created_at.localeCompare(b.created_at))
      const firstEnd = [byStart[0]!.finished_at!, byStart[1]!.finished_at!].sort()[0]!
      assert.ok(
        byStart[2]!.created_at >= firstEnd,
        JSON.stringify(byStart.map((k) => [k.created_at, k.finished_at])),
      )
      // The children's own globals: BASE came from the parent's definitions, nothing of the
      // children's runs came back into the parent's session.
      const after = await h.engine.runBlock(h.sessionId, { code: '"r" in globals(), BASE' })
      assert.deepEqual(after.block.result, [true, 40])
    } finally {
      await h.close()
    }
  })
}

test('a child past its wall clock ends with an error the parent block can catch; the block deadline does not count the wait', async () => {
  const h = await harness({
    // The parent's block deadline (2 s) is shorter than the child's clock (3 s): the wait is held.
    config: { blockTimeoutMs: 2_000, subLoops: { concurrency: 4, timeoutMs: 3_000, maxDepth: 2 } },
  })
  try {
    h.double.script([], (req) => {
      const b = JSON.stringify(req.body)
      if (b.includes('CAUGHT')) return { text: 'parent saw the timeout' }
      if (b.includes('SLOW-CHILD') && !b.includes('start a slow helper'))
        return { calls: [pyCall('import time\ntime.sleep(60)')] }
      return {
        calls: [
          pyCall(
            'try:\n    await sub_loop("SLOW-CHILD")\nexcept Exception as e:\n    print("CAU" + "GHT", e.code, str(e)[:200])',
          ),
        ],
      }
    })
    const r = await h.agent.turn(h.sessionId, 'start a slow helper')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    const block = h.engine.getBlock(r.iterations[0]!.block_ids[0]!)
    assert.equal(block.error, null, JSON.stringify(block.error))
    assert.match(block.stdout ?? '', /^CAUGHT agent\.sub-loop-timeout .*3 s limit/)
    assert.equal(r.children.length, 1)
    assert.notEqual(r.children[0]!.status, 'done')
  } finally {
    await h.close()
  }
})

test('depth is bounded: at the deepest level sub_loop is not offered; roots wider than the parent are refused', async () => {
  const h = await harness({ config: { subLoops: { concurrency: 4, timeoutMs: 600_000, maxDepth: 1 } } })
  try {
    h.double.script([], (req) => {
      const b = JSON.stringify(req.body)
      if (b.includes('LEAF-TASK') && !b.includes('nest me')) {
        if (b.includes('leaf-' + 'ok')) return { text: 'leaf answer' }
        return { calls: [pyCall('print("leaf-" + "ok", "sub_loop" in globals())')] }
      }
      if (b.includes('WIDE')) return { text: 'parent answer' }
      return {
        calls: [
          pyCall(
            'print(await sub_loop("LEAF-TASK"))\ntry:\n    await sub_loop("x", roots=["/usr/share"])\nexcept Exception as e:\n    print("WI" + "DE", e.code)',
          ),
        ],
      }
    })
    const r = await h.agent.turn(h.sessionId, 'nest me')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    const block = h.engine.getBlock(r.iterations[0]!.block_ids[0]!)
    assert.equal(block.stdout, 'leaf answer\nWIDE policy.root-not-allowed\n', JSON.stringify(block.error))
    const leaf = h.agent.getTurn(r.children[0]!.session_id, r.children[0]!.turn_id)
    assert.match(h.engine.getBlock(leaf.iterations[0]!.block_ids[0]!).stdout ?? '', /^leaf-ok False\n$/)
    // The parent's tools listed sub_loop; the leaf's did not.
    const prompts = h.double.requests.map((q) => JSON.stringify(q.body))
    assert.ok(prompts.find((p) => p.includes('nest me'))!.includes('sub_loop('))
    const leafPrompt = prompts.find((p) => p.includes('LEAF-TASK') && !p.includes('nest me'))!
    assert.ok(!leafPrompt.includes('sub_loop('), leafPrompt.slice(0, 2000))
  } finally {
    await h.close()
  }
})

test('cancelling the parent turn cancels its running children', async () => {
  const h = await harness()
  try {
    h.double.script([], (req) => {
      const b = JSON.stringify(req.body)
      if (b.includes('STUCK-CHILD') && !b.includes('be cancelled'))
        return { calls: [pyCall('import time\ntime.sleep(60)')] }
      return { calls: [pyCall('await sub_loop("STUCK-CHILD")')] }
    })
    const { turnId, done } = await h.agent.startTurn(h.sessionId, 'start and be cancelled')
    // Wait until the child's block runs.
    await until('the child block to run', () =>
      h.engine
        .listSessions({})
        .some(
          (s) => s.id !== h.sessionId && h.engine.getSession(s.id).blocks.some((b) => b.status === 'running'),
        ),
    )
    assert.equal(h.agent.cancel(h.sessionId, turnId), true)
    const r = await done
    assert.equal(r.status, 'cancelled')
    // The child ends on its own signal; its row may be stored just after the parent's.
    const kid = () => h.agent.getTurn(r.children[0]!.session_id, r.children[0]!.turn_id)
    await until('the child turn to be stored cancelled', () => kid().status !== 'running')
    assert.equal(kid().status, 'cancelled')
  } finally {
    await h.close()
  }
})

test('agent(name, prompt) runs a definition as a child: its body is the role, its tools narrow the child', async () => {
  const { mkdirSync, writeFileSync } = await import('node:fs')
  const { join } = await import('node:path')
  const h = await harness()
  try {
    mkdirSync(join(h.root, '.claude', 'agents'), { recursive: true })
    writeFileSync(
      join(h.root, '.claude', 'agents', 'reviewer.md'),
      '---\nname: reviewer\ndescription: Reviews code.\ntools: Read, Grep\nmodel: inherit\n---\nYou review code. REVIEWER-ROLE.\n',
    )
    h.double.script([], (req) => {
      const b = JSON.stringify(req.body)
      if (b.includes('REVIEW-TASK') && !b.includes('hand it over')) {
        if (b.includes('tools-' + 'seen')) return { text: 'looks fine' }
        return {
          calls: [
            pyCall(
              'import builtins\nhas = lambda n: hasattr(builtins, n)\nprint("tools-" + "seen", has("cat"), has("write"), has("patch"))',
            ),
          ],
        }
      }
      if (b.includes('VERDICT')) return { text: 'parent answer' }
      return { calls: [pyCall('print("VER" + "DICT", await agent("reviewer", "REVIEW-TASK"))')] }
    })
    // A new worker discovers the definition (discovery runs at worker start).
    await h.engine.dropWorker(h.sessionId)
    const r = await h.agent.turn(h.sessionId, 'hand it over to the reviewer')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    const block = h.engine.getBlock(r.iterations[0]!.block_ids[0]!)
    assert.equal(block.stdout, 'VERDICT looks fine\n', JSON.stringify(block.error))
    const kid = h.agent.getTurn(r.children[0]!.session_id, r.children[0]!.turn_id)
    assert.match(
      h.engine.getBlock(kid.iterations[0]!.block_ids[0]!).stdout ?? '',
      /^tools-seen True False False\n$/,
    )
    // The child's system prompt carries the definition's body; the parent's lists the agent.
    const bodies = h.double.requests.map((q) => JSON.stringify(q.body))
    assert.ok(
      bodies.find((b) => b.includes('REVIEW-TASK') && !b.includes('hand it over'))!.includes('REVIEWER-ROLE'),
    )
    assert.ok(bodies.find((b) => b.includes('hand it over'))!.includes('reviewer'))
  } finally {
    await h.close()
  }
})
