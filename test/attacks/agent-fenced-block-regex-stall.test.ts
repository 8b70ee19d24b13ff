// ATTACK (surface 5, what starves the server; the model's text is as hostile as its code): with
// `toolCalling: false` (agent.json, for models without tool calls) the loop finds the code to run
// in the model's reply with `/```(?:python3?|py)(?:[ \t][^\n]*)?\r?\n([\s\S]*?)```/i`
// (src/agent/loop.ts fencedBlock), on the event loop that serves every session. On a reply that
// is one line of "```py " repeated, every opener scans the rest of the line for a newline that
// never comes: quadratic. 240 KB of reply (a local model's server sets no output cap) stops the
// whole host for seconds; 1 MB for minutes.
// Here: the provider double answers one turn with "```py " × 40 000 (240 KB, one line, sent in 16 KiB
// deltas: in 5-character ones the OpenAI SDK's per-event parsing, ~3 s for 48,000 events, would
// be measured instead; the host's stream loops yield to the event loop every 10 ms of it); a timer
// measures the server process's event-loop stalls while the turn reads it. On the current code
// the loop stops for ~2.7 s here.
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { test } from 'node:test'
import { type Harness, harness } from '../agent/harness.js'

test("a model's reply is searched for its code block without stalling the host", async () => {
  let h: Harness | undefined
  let ticker: NodeJS.Timeout | undefined
  try {
    h = await harness({ config: { toolCalling: false } })
    // Allowed: a fenced block in a reply runs.
    h.double.script([{ text: '```python\nprint(6 * 7)\n```' }, { text: 'forty-two' }])
    const ok = await h.agent.turn(h.sessionId, 'compute')
    assert.equal(ok.status, 'done', JSON.stringify(ok.error))
    assert.equal(h.engine.getBlock(ok.iterations[0]!.block_ids[0]!).stdout, '42\n')

    h.double.script([{ text: '```py '.repeat(40_000), textPiece: 16_384 }])
    let last = performance.now()
    let worst = 0
    ticker = setInterval(() => {
      const now = performance.now()
      worst = Math.max(worst, now - last)
      last = now
    }, 10)
    const again = await h.agent.turn(h.sessionId, 'again')
    // The last stretch counts too: a stall just before the turn ends leaves no tick after it.
    worst = Math.max(worst, performance.now() - last)
    clearInterval(ticker)
    assert.equal(again.status, 'done', JSON.stringify(again.error))
    assert.ok(worst < 1_000, `the host's event loop stopped for ${Math.round(worst)} ms on one model reply`)
  } finally {
    clearInterval(ticker)
    await h?.close()
    if (h) {
      rmSync(h.home, { recursive: true, force: true })
      rmSync(h.root, { recursive: true, force: true })
    }
  }
})
