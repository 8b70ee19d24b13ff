// The budget's order when some holders are draining (plain answers whose socket took bytes within
// DRAINING_WINDOW_MS, src/http/sse-budget.ts; seventeenth outsider pass): within a session a
// draining holder is not dropped to make room (the asking one does not fit), a stalled one is; for
// the server's bound a draining holder of another session goes only if that session holds more
// than the asking one would.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { type BudgetedStream, DRAINING_WINDOW_MS, SseBudget } from '../../src/http/sse-budget.js'

function holder(budget: SseBudget, sessionId: string, bytes: number, progressedAt?: number) {
  const h = { dropped: false }
  const s: BudgetedStream = {
    sessionId,
    bytes: 0,
    progressedAt,
    drop: () => {
      h.dropped = true
      budget.unregister(s)
    },
  }
  budget.register(s)
  if (bytes > 0) assert.equal(budget.take(s, bytes), true)
  return Object.assign(h, { s })
}

test("a draining holder keeps its session's share; a stalled one is dropped for it", () => {
  const budget = new SseBudget(1000, 100)
  const reader = holder(budget, 'A', 60, Date.now())
  const asker = holder(budget, 'A', 0, Date.now())
  assert.equal(budget.take(asker.s, 60), false)
  assert.equal(reader.dropped, false)

  const stalled = new SseBudget(1000, 100)
  const old = holder(stalled, 'A', 60, Date.now() - DRAINING_WINDOW_MS - 1)
  const next = holder(stalled, 'A', 0, Date.now())
  assert.equal(stalled.take(next.s, 60), true)
  assert.equal(old.dropped, true)

  // A holder that tracks no progress (an event stream) is dropped as before.
  const streams = new SseBudget(1000, 100)
  const stream = holder(streams, 'A', 60)
  const other = holder(streams, 'A', 0, Date.now())
  assert.equal(streams.take(other.s, 60), true)
  assert.equal(stream.dropped, true)
})

test("for the server's bound a draining holder goes only for a session holding less than its own", () => {
  const budget = new SseBudget(100, 100)
  const x = holder(budget, 'X', 60, Date.now())
  const y = holder(budget, 'Y', 0, Date.now())
  assert.equal(budget.take(y.s, 50), true)
  assert.equal(x.dropped, true)

  const level = new SseBudget(100, 100)
  const v = holder(level, 'V', 60, Date.now())
  const w = holder(level, 'W', 30, Date.now())
  const w2 = holder(level, 'W', 0, Date.now())
  assert.equal(level.take(w2.s, 40), false)
  assert.equal(v.dropped, false)
  assert.equal(w.dropped, false)
})
