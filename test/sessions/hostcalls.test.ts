// Host calls from real guest code: schema checks, the per-session concurrency limit, the
// JSON boundary, and that a call is served by the session bound to its socket.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { z } from 'zod'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import { python, tempHome } from './helpers.js'

const { home, root } = tempHome('hostcalls')
let rt: Runtime

before(async () => {
  rt = await createRuntime({
    home,
    python,
    pool: { size: 1 },
    maxConcurrentHostCalls: 2,
    defaultTools: false,
  })
})
after(async () => {
  await rt.close()
})

test('arguments are checked against the tool schema before the tool runs', async () => {
  const s = await rt.createSession({ roots: [root] })
  let ran = 0
  s.bind(
    'add',
    (a: number, b: number) => {
      ran++
      return a + b
    },
    { signature: '(a, b)', args: z.tuple([z.number(), z.number()]) },
  )
  assert.equal((await s.runBlock('print(await add(2, 3))')).stdout, '5\n')
  const r = await s.runBlock('try:\n    add("two", 3)\nexcept Exception as e:\n    print(e)')
  assert.match(r.stdout ?? '', /add\(a, b\): 0: Expected number, received string/)
  assert.equal(ran, 1, 'the refused call never reached the tool')
  await s.dispose()
})

test('no more than the per-session limit of host calls run at once; the rest wait their turn', async () => {
  const s = await rt.createSession({ roots: [root] })
  let active = 0
  let peak = 0
  s.bind('slow', async (i: number) => {
    active++
    peak = Math.max(peak, active)
    await new Promise((r) => setTimeout(r, 50))
    active--
    return i * 10
  })
  const r = await s.runBlock('print(await gather(*[slow(i) for i in range(6)]))')
  assert.equal(r.stdout, '[0, 10, 20, 30, 40, 50]\n')
  assert.equal(peak, 2)
  await s.dispose()
})

test('a tool result that cannot cross as JSON fails the call with its key path', async () => {
  const s = await rt.createSession({ roots: [root] })
  s.bind('when', () => ({ at: { stamp: new Date(0) } }))
  const r = await s.runBlock('try:\n    when()\nexcept Exception as e:\n    print(e)')
  assert.match(r.stdout ?? '', /cannot cross to Python: a Date instance at \.at\.stamp/)
  await s.dispose()
})

test('each call is served by the session that owns the socket, whatever the guest claims', async () => {
  const a = await rt.createSession({ roots: [root] })
  const b = await rt.createSession({ roots: [root] })
  a.bind('who', () => 'a')
  b.bind('who', () => 'b')
  const [ra, rb] = await Promise.all([a.runBlock('print(who())'), b.runBlock('print(who())')])
  assert.equal(ra.stdout, 'a\n')
  assert.equal(rb.stdout, 'b\n')
  await Promise.all([a.dispose(), b.dispose()])
})

test('a call over the 16 MiB frame cap is refused in the guest, catchably, and the worker stays', async () => {
  const s = await rt.createSession({ roots: [root] })
  const seen: number[] = []
  s.bind('take', (data: string) => {
    seen.push(data.length)
    return data.length
  })
  const pid = s.pid
  const r = await s.runBlock(
    [
      'big = "x" * (20 << 20)',
      'try:',
      '    take(big)',
      'except ValueError as e:',
      '    print(type(e).__name__)',
      '    print(e)',
      'print(await take("small"))',
    ].join('\n'),
  )
  assert.equal(r.error, undefined, JSON.stringify(r.error))
  const [kind, message, small] = (r.stdout ?? '').trimEnd().split('\n')
  assert.equal(kind, 'HostCallTooLarge')
  assert.match(message ?? '', /^take: the call is 20,971,5\d\d characters as JSON \(20\.0 MiB\)/)
  assert.match(message ?? '', /over the host's cap of 16,777,216 characters \(16\.0 MiB\)/)
  assert.match(message ?? '', /write the data to a file in the session's roots and pass its path/i)
  assert.equal(small, '5')
  assert.deepEqual(seen, [5], 'the oversized call never reached the host')
  // Inside gather the refusal lands on its own awaitable; the others run.
  const g = await s.runBlock(
    'res = await gather(take("y" * (17 << 20)), take("ok"), return_exceptions=True)\nprint(type(res[0]).__name__, res[1])',
  )
  assert.equal(g.stdout, 'HostCallTooLarge 2\n', JSON.stringify(g))
  assert.equal(s.state, 'ready')
  assert.equal(s.pid, pid, 'the same worker serves on')
  assert.equal((await s.runBlock('6 * 7')).result, 42)
  await s.dispose()
})

test('the cap counts what the host counts: non-ASCII text under it in characters still crosses', async () => {
  const s = await rt.createSession({ roots: [root] })
  s.bind('take', (data: string) => data.length)
  // 6 Mi euro signs: 18 MiB of UTF-8, 6 Mi characters for the host's decoder.
  const r = await s.runBlock('print(await take("\\u20ac" * (6 << 20)))')
  assert.equal(r.stdout, `${6 << 20}\n`, JSON.stringify(r))
  await s.dispose()
})

test('arguments nested past the depth cap are refused before sending', async () => {
  const s = await rt.createSession({ roots: [root] })
  let ran = 0
  s.bind('take', () => ++ran)
  const pid = s.pid
  const r = await s.runBlock(
    'deep = []\nfor _ in range(99):\n    deep = [deep]\ntry:\n    take(deep)\nexcept ValueError as e:\n    print(e)\nok = [[[1]]]\nprint(await take(ok))',
  )
  assert.equal(r.error, undefined, JSON.stringify(r.error))
  assert.match(
    r.stdout ?? '',
    /^take: the call's arguments nest 101 levels deep; a host call carries at most 63/,
  )
  assert.match(r.stdout ?? '', /\n1\n$/)
  assert.equal(ran, 1)
  assert.equal(s.pid, pid)
  await s.dispose()
})
