// Which stream the shared SSE budget (src/http/sse-budget.ts) drops when a frame does not fit,
// on the budget itself: for the server's bound, the session holding the most gives up its stream
// furthest behind first, so many stalled streams of one session, each holding a little, cannot
// push out another session's one reader that holds more than any of them; and a replay's forced
// frame drops others before it goes past the bound.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { type BudgetedStream, SseBudget } from '../../src/http/sse-budget.js'

const MiB = 1024 * 1024

function stream(budget: SseBudget, sessionId: string, dropped: string[], name: string): BudgetedStream {
  const s: BudgetedStream = {
    sessionId,
    bytes: 0,
    drop: () => {
      dropped.push(name)
      budget.unregister(s)
    },
  }
  budget.register(s)
  return s
}

test("the server's bound drops from the session holding the most, not the single largest stream", () => {
  const budget = new SseBudget(10 * MiB, 8 * MiB)
  const dropped: string[] = []
  const victim = stream(budget, 'victim', dropped, 'victim')
  assert.ok(budget.take(victim, 2 * MiB))
  // Eight streams of one session, 1 MiB each: 10 MiB in all, the budget full.
  const many = Array.from({ length: 8 }, (_, i) => stream(budget, 'many', dropped, `many${i}`))
  for (const s of many) assert.ok(budget.take(s, MiB))
  assert.equal(budget.queuedBytes, 10 * MiB)
  // A new stream of a third session needs 1 MiB: one of the heavy session's streams goes.
  const other = stream(budget, 'other', dropped, 'other')
  assert.ok(budget.take(other, MiB))
  assert.deepEqual(dropped, ['many0'], 'a stream of the session holding 8 MiB, not the 2 MiB reader')
  assert.equal(budget.queuedBytes, 10 * MiB)
})

test("a replay's forced frame drops streams furthest behind before passing the bound", () => {
  const budget = new SseBudget(4 * MiB, 4 * MiB)
  const dropped: string[] = []
  const stalled = Array.from({ length: 4 }, (_, i) => stream(budget, 's', dropped, `stalled${i}`))
  for (const s of stalled) assert.ok(budget.take(s, MiB))
  const replaying = stream(budget, 's', dropped, 'replaying')
  assert.ok(budget.take(replaying, 2 * MiB, true))
  assert.equal(dropped.length, 2, 'two stalled streams made room')
  assert.equal(budget.queuedBytes, 4 * MiB, 'the bound held')
  // With nobody left holding more, a forced frame still goes through (a reconnect progresses).
  const alone = new SseBudget(MiB, MiB)
  const only = stream(alone, 't', dropped, 'only')
  assert.ok(alone.take(only, 3 * MiB, true))
  assert.equal(alone.queuedBytes, 3 * MiB)
  // Unforced, a frame that cannot fit is refused when the stream asking holds the most itself
  // (the caller then drops it).
  assert.equal(alone.take(only, MiB), false)
  assert.equal(alone.queuedBytes, 3 * MiB)
})
