// Issue 31's done-when scenario, in each dialect the double speaks: a parent turn fans out three
// sub_loops under gather, one child loads a skill (skill(name), then a resource file read through
// the read-only mount), and the parent's turn outgrows its (small, configured) window, compacts
// and still answers. Replies are routed by what each request carries and what came back to it,
// so every step the test checks is one the model could only take after the real one ran.
import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { pyCall, type Recorded, type Scripted } from './double.js'
import { harness } from './harness.js'

const MODELS = {
  chat: 'openai/double-model',
  anthropic: 'anthropic/claude-double',
  responses: 'openai-responses/double-model',
} as const

// Tokens; the system prompt alone is about 3k, so four 4 KB outputs push the parent past 75 %.
const WINDOW = 6_000
const BIG_BLOCKS = 4
const isSummary = (req: Recorded) => JSON.stringify(req.body).includes('You summarise the earlier part')
const size = (req: Recorded) => Buffer.byteLength(JSON.stringify(req.body))

// The model: the parent's requests carry PARENT-TASK (its code names the children's tasks, so it
// is routed first); a summary request carries the summariser's prompt (and the parent's history).
function model() {
  let parentSteps = 0
  return (req: Recorded): Scripted => {
    const b = JSON.stringify(req.body)
    if (isSummary(req)) {
      // The summary keeps what the children answered (as a model's summary would).
      const answers = /ANSWERS \[[^\]]*\]/.exec(b)?.[0] ?? 'no answers seen'
      return { text: `SUMMARY-k2: the helpers said ${answers}`, usage: { input: 50, output: 7 } }
    }
    if (b.includes('PARENT-TASK')) {
      const step = parentSteps++
      if (step === 0) {
        return {
          calls: [
            pyCall(
              'r = await gather(sub_loop("CHILD-A-TASK"), sub_loop("CHILD-B-TASK"), sub_loop("CHILD-C-TASK"))\nprint("ANS" + "WERS", r)',
            ),
          ],
          usage: { input: 100, output: 5 },
        }
      }
      if (step <= BIG_BLOCKS) {
        return { calls: [pyCall(`print("${step}" * 4096)`)], usage: { input: 100, output: 5 } }
      }
      // The answer is what the parent can still see of its children after the compaction.
      const seen = /ANSWERS \[[^\]]*\]/.exec(b)?.[0] ?? 'nothing'
      return { text: `parent done; ${seen}`, usage: { input: 100, output: 5 } }
    }
    if (b.includes('CHILD-B-TASK')) {
      // B loads the skill, then reads its resource file inside its jail.
      const factor = /FACTOR=([\d.]+)/.exec(b)?.[1]
      if (factor !== undefined && b.includes('SKILL-BODY-9q')) {
        return { text: `answer-B ${factor}`, usage: { input: 10, output: 1 } }
      }
      return {
        calls: [
          pyCall(
            's = await skill("unit-conv")\nprint(s["content"])\nprint(s["resources"])\nprint(open(s["resources"][0]).read())',
          ),
        ],
        usage: { input: 10, output: 1 },
      }
    }
    for (const k of ['A', 'C']) {
      if (b.includes(`CHILD-${k}-TASK`)) {
        if (b.includes(`saw-${k}`)) return { text: `answer-${k}`, usage: { input: 10, output: 1 } }
        return { calls: [pyCall(`print("saw" + "-${k}")`)], usage: { input: 10, output: 1 } }
      }
    }
    return { text: 'unrouted' }
  }
}

for (const [dialect, ref] of Object.entries(MODELS)) {
  test(`${dialect}: three sub_loops under gather (one reads a skill), the parent compacts and still answers; the tree is stored with rolled-up usage`, async () => {
    const name = ref.split('/')[1]!
    const h = await harness({
      config: {
        model: ref,
        maxIterations: 20,
        contextWindows: { [name]: WINDOW },
        subLoops: { concurrency: 4, timeoutMs: 600_000, maxDepth: 2 },
      },
    })
    try {
      // A skill in the vis home: outside the session's roots, so mounted read-only in each new
      // worker (the children's) at /vis/skills/<name>.
      const dir = join(h.home, 'skills', 'unit-conv')
      mkdirSync(dir, { recursive: true })
      writeFileSync(
        join(dir, 'SKILL.md'),
        '---\nname: unit-conv\ndescription: Converts inches to centimetres.\n---\nSKILL-BODY-9q: multiply by the factor in factor.txt.\n',
      )
      writeFileSync(join(dir, 'factor.txt'), 'FACTOR=2.54\n')
      h.double.script([], model())

      const r = await h.agent.turn(h.sessionId, 'PARENT-TASK: ask three helpers, then print a lot')
      assert.equal(r.status, 'done', JSON.stringify(r.error))
      // The answer: the children's answers survived the compaction (through the summary).
      assert.equal(r.answer, "parent done; ANSWERS ['answer-A', 'answer-B 2.54', 'answer-C']")
      const gatherBlock = h.engine.getBlock(r.iterations[0]!.block_ids[0]!)
      assert.equal(
        gatherBlock.stdout,
        "ANSWERS ['answer-A', 'answer-B 2.54', 'answer-C']\n",
        JSON.stringify(gatherBlock.error),
      )
      // Every iteration is stored: the gather, the big blocks, the answer.
      assert.equal(r.iterations.length, BIG_BLOCKS + 2)

      // The compaction: an event of the parent's turn (the library's and the stored log), and the
      // model's requests after it under the window again.
      const compacted = h.events.filter((e) => e.type === 'turn.compacted')
      assert.ok(compacted.length >= 1, 'the parent compacted')
      assert.equal(compacted[0]!.turnId, r.id)
      assert.equal(compacted[0]!.reason, 'threshold')
      assert.equal(compacted[0]!.window, WINDOW)
      const stored = h.engine.replayEvents(h.sessionId, 0).events.filter((e) => e.type === 'turn.compacted')
      assert.equal(stored.length, compacted.length)
      assert.equal((stored[0]!.data as { turn_id: string }).turn_id, r.id)
      const summaries = h.double.requests.filter(isSummary)
      assert.equal(summaries.length, compacted.length, 'only the parent compacted')
      const last = h.double.requests.at(-1)!
      assert.ok(JSON.stringify(last.body).includes('SUMMARY-k2'), 'the last request reads the summary')
      assert.ok(size(last) < WINDOW * 4.5, `the last request is ${size(last)} bytes`)

      // The tree: three child turns naming the parent turn and the block that started them.
      assert.equal(r.children.length, 3)
      const kids = r.children.map((c) => h.agent.getTurn(c.session_id, c.turn_id))
      for (const kid of kids) {
        assert.equal(kid.status, 'done')
        assert.notEqual(kid.session_id, h.sessionId)
        assert.deepEqual(kid.parent, { session_id: h.sessionId, turn_id: r.id, block_id: gatherBlock.id })
        assert.equal(kid.usage!.input, 20)
      }
      const b = kids.find((k) => k.prompt === 'CHILD-B-TASK')!
      const read = h.engine.getBlock(b.iterations[0]!.block_ids[0]!)
      assert.equal(read.error, null, JSON.stringify(read.error))
      assert.match(read.stdout ?? '', /SKILL-BODY-9q/)
      assert.match(read.stdout ?? '', /\['\/vis\/skills\/unit-conv\/factor\.txt'\]\nFACTOR=2\.54\n/)
      // The parent's view lists them; a child's view names no children of its own.
      assert.deepEqual(
        r.children.map((c) => c.status),
        ['done', 'done', 'done'],
      )
      for (const k of kids) assert.deepEqual(k.children, [])

      // Usage rolls up: the parent's requests (six) and summaries, then each child's two.
      const own = (BIG_BLOCKS + 2) * 100 + 50 * summaries.length
      assert.equal(r.usage!.input, own)
      assert.equal(r.usage!.output, (BIG_BLOCKS + 2) * 5 + 7 * summaries.length)
      assert.equal(r.tree_usage!.input, own + 3 * 20)
      assert.equal(r.tree_usage!.output, r.usage!.output + 3 * 2)
      // And the HTTP-shaped list of the parent session holds only the parent's turn.
      assert.deepEqual(
        h.agent.listTurns(h.sessionId).map((t) => t.id),
        [r.id],
      )
    } finally {
      await h.close()
    }
  })
}
