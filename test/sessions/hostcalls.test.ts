// Host calls from real guest code: schema checks, the per-session concurrency limit, the
// JSON boundary, and that a call is served by the session bound to its socket.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { z } from 'zod'
import { createRuntime, type Runtime } from '../../src/sessions/runtime.js'
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
