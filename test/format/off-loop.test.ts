// The server's display formatter: ruff in a worker thread, bounded in time, a trap ending the
// thread (never the next call), every outcome remembered by content. Real ruff WASM, real threads.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MAX_FORMAT_CHARS, PythonFormatter } from '../../src/format/python.js'
import { ruffEngine } from '../../src/format/ruff.js'

// ruff's parser spends seconds on a long chain of call trailers, and traps past ~10 000 of them.
const chain = (n: number) => `x = a${'()'.repeat(n)}`

test('ordinary code is formatted off the event loop; a parse error stays verbatim', async () => {
  const f = new PythonFormatter()
  const r = await f.formatOffLoop("x=1\nif x :\n  print( 'a' )\n")
  assert.equal(r.status, 'formatted')
  assert.equal(r.code, "x = 1\nif x:\n    print('a')\n")
  const bad = await f.formatOffLoop('def (:\n')
  assert.equal(bad.status, 'verbatim')
  assert.equal(bad.reason, 'parse-error')
  assert.match(bad.detail ?? '', /Expected/)
  const huge = `x = 1\n${'#'.repeat(MAX_FORMAT_CHARS)}`
  assert.deepEqual(await f.formatOffLoop(huge), { code: huge, status: 'verbatim', reason: 'too-large' })
})

test('code past the time bound is shown as written, remembered, and the next code still formats', async () => {
  const f = new PythonFormatter({ timeoutMs: 150 })
  const code = chain(30_000)
  let worst = 0
  let last = performance.now()
  const ticker = setInterval(() => {
    const now = performance.now()
    worst = Math.max(worst, now - last)
    last = now
  }, 10)
  const r = await f.formatOffLoop(code)
  clearInterval(ticker)
  assert.deepEqual(r, { code, status: 'verbatim', reason: 'timeout' })
  assert.ok(worst < 500, `the event loop stopped for ${Math.round(worst)} ms`)
  // Remembered: the same code costs the thread nothing the second time.
  const entries = f.cachedEntries
  const again = await f.formatOffLoop(code)
  assert.equal(again, r)
  assert.equal(f.cachedEntries, entries)
  // A fresh thread formats the next code.
  assert.equal((await f.formatOffLoop('y  =  2')).code, 'y = 2\n')
})

test("a WASM trap ends the formatter thread; another session's code formats after it", async () => {
  const f = new PythonFormatter({ timeoutMs: 60_000 })
  const first = await f.formatOffLoop(chain(10_000))
  assert.equal(first.status, 'verbatim')
  assert.equal(first.reason, 'failed', `${first.reason}: ${first.detail}`)
  const second = await f.formatOffLoop(chain(10_001))
  assert.equal(second.reason, 'failed')
  assert.equal((await f.formatOffLoop('z  =  3')).code, 'z = 3\n')
})

test('the in-process formatter (library, CLI) drops a trapped ruff instance and loads a fresh one', () => {
  const f = new PythonFormatter()
  const before = ruffEngine()
  assert.ok(before)
  assert.equal(f.format(chain(10_000)).status, 'verbatim')
  assert.equal(f.format(chain(10_001)).status, 'verbatim')
  assert.notEqual(ruffEngine(), before, 'a new instance after the trap')
  assert.equal(f.format('w  =  4').code, 'w = 4\n')
})

test('a call that waited past the queue bound behind slow codes is answered as written, not remembered', async () => {
  // One caller's slow code holds the thread up to its time bound; another caller's code, queued
  // behind it with a shorter wait bound, is not run: it comes back as written, marked busy.
  const slow = new PythonFormatter({ timeoutMs: 400 })
  const other = new PythonFormatter({ queueWaitMs: 50 })
  const held = slow.formatOffLoop(chain(30_001))
  const waited = await other.formatOffLoop('v  =  5')
  assert.deepEqual(waited, { code: 'v  =  5', status: 'verbatim', reason: 'busy' })
  assert.equal((await held).reason, 'timeout')
  assert.equal(other.cachedEntries, 0, 'a busy answer is not remembered')
  // With the thread free again the same code is formatted.
  assert.equal((await other.formatOffLoop('v  =  5')).code, 'v = 5\n')
})
