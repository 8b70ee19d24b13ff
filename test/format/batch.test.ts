// A session view's codes go to the formatter thread as ONE call (formatManyOffLoop): one turn and
// one time bound for the batch. A code that had the whole bound to itself and passed it times out
// (remembered); one the batch's bound cut short, and those after it, are shown as written and NOT
// remembered, so the next view formats them. Real ruff WASM, real threads.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { PythonFormatter } from '../../src/format/python.js'

// ruff's parser spends seconds on a long chain of call trailers.
const chain = (n: number, tag: string) => `x = a${'()'.repeat(n)}  # ${tag}`

test("a batch's codes share one time bound; those it cut short are formatted by the next batch", async () => {
  // A bound well above a small code's first format on a cold thread (V8 compiles ruff's functions on
  // first call), far below the chain's seconds.
  const f = new PythonFormatter({ timeoutMs: 1000 })
  const slow = chain(30_000, 'first')
  const r = await f.formatManyOffLoop([slow, 'a  =  1', 'b  =  [1,2]', 'a  =  1'], 's1')
  assert.deepEqual(r[0], { code: slow, status: 'verbatim', reason: 'timeout' })
  for (const [i, code] of [
    [1, 'a  =  1'],
    [2, 'b  =  [1,2]'],
    [3, 'a  =  1'],
  ] as const) {
    assert.deepEqual(r[i], { code, status: 'verbatim', reason: 'busy' })
  }
  // The slow code is remembered; the others were not, and are formatted now.
  const again = await f.formatManyOffLoop([slow, 'a  =  1', 'b  =  [1,2]'], 's1')
  assert.deepEqual(
    again.map((x) => x.code),
    [slow, 'a = 1\n', 'b = [1, 2]\n'],
  )
  assert.equal(again[0], r[0])
  // Ordinary codes first, a slow one last: the slow one had less than the whole bound, so it is
  // not remembered as slow (the next batch gives it the whole bound and it times out then).
  const late = chain(30_000, 'late')
  const mixed = await f.formatManyOffLoop(['c  =  3', late], 's2')
  assert.equal(mixed[0]!.code, 'c = 3\n')
  assert.deepEqual(mixed[1], { code: late, status: 'verbatim', reason: 'busy' })
  const alone = await f.formatManyOffLoop([late], 's2')
  assert.deepEqual(alone[0], { code: late, status: 'verbatim', reason: 'timeout' })
  assert.deepEqual(await f.formatManyOffLoop([], 's3'), [])
})

// Seventeenth outsider pass: a code whose output passes its bound ends the thread (tooLarge); the
// codes after it in the batch are not each given a fresh thread (a start and a load of ruff each,
// uncounted, one turn of many restarts): they are answered as written, and the next batch formats
// them.
const nested = (name: string, depth: number) => `${name} = ${'[a, '.repeat(depth)}1${']'.repeat(depth)}\n`

test('a batch ends at the first code that ends the thread; the next batch formats the rest', async () => {
  const f = new PythonFormatter()
  const codes = [...Array.from({ length: 40 }, (_, i) => nested(`w${i}`, 120)), 'a  =  1']
  const r = await f.formatManyOffLoop(codes, 'amplifying')
  assert.equal(r[0]!.reason, 'too-large', JSON.stringify(r[0]).slice(0, 200))
  assert.deepEqual(
    r.slice(1).map((x) => x.reason),
    codes.slice(1).map(() => 'busy'),
  )
  // The one that ended the thread is remembered; the others were not, and are formatted now, one
  // restart a batch.
  const next = await f.formatManyOffLoop([codes[0]!, codes[1]!, 'a  =  1'], 'amplifying')
  assert.equal(next[0], r[0])
  assert.deepEqual(
    next.map((x) => x.reason),
    ['too-large', 'too-large', 'busy'],
  )
  const ordinary = await f.formatManyOffLoop(['a  =  1', 'b  =  [1,2]'], 'amplifying')
  assert.deepEqual(
    ordinary.map((x) => x.code),
    ['a = 1\n', 'b = [1, 2]\n'],
  )
})
