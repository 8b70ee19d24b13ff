// The budget's order when some holders are draining (plain answers whose socket took bytes within
// DRAINING_WINDOW_MS, src/http/sse-budget.ts; seventeenth outsider pass): within a session a
// draining holder is not dropped to make room (the asking one does not fit), a stalled one is; for
// the server's bound a draining holder of another session goes only if that session holds more
// than the asking one would.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  type BudgetedStream,
  DRAINING_WINDOW_MS,
  DRAINING_WITHIN_MS,
  SseBudget,
  smallShare,
} from '../../src/http/sse-budget.js'

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

// Eighteenth outsider pass: progress alone is not draining. A holder that reports its rate drains
// only if it would hand what it holds to its socket within DRAINING_WITHIN_MS at that rate.
test('a holder reading too slowly for what it holds is stalled, whatever its last progress', () => {
  const budget = new SseBudget(1000, 1000)
  const slow = holder(budget, 'A', 600, Date.now())
  slow.s.rate = () => (600 * 1000) / DRAINING_WITHIN_MS / 2
  const asker = holder(budget, 'B', 0, Date.now())
  assert.equal(budget.take(asker.s, 600), true)
  assert.equal(slow.dropped, true)

  const keeps = new SseBudget(1000, 1000)
  const fast = holder(keeps, 'A', 600, Date.now())
  fast.s.rate = () => (600 * 1000) / DRAINING_WITHIN_MS
  const other = holder(keeps, 'B', 0, Date.now())
  // B would hold 600, no less than A: A's reader keeps up and its answer stays; B's does not fit.
  assert.equal(keeps.take(other.s, 600), false)
  assert.equal(fast.dropped, false)
})

// An event stream that keeps up and a small answer take room from their session's draining
// holders; a large answer asking does not (it is the one refused).
test("a stream that keeps up and a small answer push a draining holder out of their session's share", () => {
  const max = 32 * 100
  const small = smallShare(max)
  const streamCase = new SseBudget(10 * max, max)
  const download = holder(streamCase, 'V', max - 10, Date.now())
  const stream = holder(streamCase, 'V', 0)
  assert.equal(streamCase.take(stream.s, small), true)
  assert.equal(download.dropped, true)

  const answerCase = new SseBudget(10 * max, max)
  const d2 = holder(answerCase, 'V', max - 10, Date.now())
  const post = holder(answerCase, 'V', 0, Date.now())
  assert.equal(answerCase.take(post.s, small), true)
  assert.equal(d2.dropped, true)

  const largeCase = new SseBudget(10 * max, max)
  const d3 = holder(largeCase, 'V', max - 10, Date.now())
  const large = holder(largeCase, 'V', 0, Date.now())
  assert.equal(largeCase.take(large.s, small + 1), false)
  assert.equal(d3.dropped, false)

  // A stream already behind (more than the small share queued) does not push a reader out.
  const behindCase = new SseBudget(10 * max, max)
  const behind = holder(behindCase, 'V', small + 1)
  const d4 = holder(behindCase, 'V', max - small - 1, Date.now())
  assert.equal(behindCase.take(behind.s, 10), false)
  assert.equal(d4.dropped, false)
})
