// interrupt(): lands in busy loops, blocking syscalls and host-call waits, leaves the
// interpreter usable, and never leaks into a later job.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { loadPython, type Outcome, type PythonRuntime } from '../../src/native/index.js'
import { tempHome, until } from './helpers.js'

tempHome()
let rt: PythonRuntime
const output: string[] = []

before(async () => {
  rt = await loadPython()
  rt.onOutput((_job, _stream, text) => output.push(text))
})

// Starts code that prints `marker` when it is about to block, then interrupts it.
async function interruptAfter(code: string, marker = 'started'): Promise<Outcome> {
  output.length = 0
  const p = rt.exec(`import sys\nprint(${JSON.stringify(marker)}, flush=True)\n${code}`)
  await until(() => output.join('').includes(marker), `"${marker}" from the job`)
  await new Promise((r) => setTimeout(r, 30)) // let it enter the blocking call
  assert.equal(rt.interrupt(p.job), true)
  return p
}

function assertKeyboardInterrupt(o: Outcome): void {
  assert.equal(o.ok, false, JSON.stringify(o))
  if (!o.ok) assert.equal(o.error.type, 'KeyboardInterrupt')
}

async function assertUsable(): Promise<void> {
  const o = await rt.eval('sum(range(10))')
  assert.deepEqual(o.ok && o.value, 45)
}

test('an idle interrupt is a harmless no-op', async () => {
  assert.equal(rt.interrupt(), false)
  assert.equal(rt.interrupt(12345), false)
  await assertUsable()
})

test('a busy loop is interrupted', async () => {
  assertKeyboardInterrupt(await interruptAfter('while True:\n    pass'))
  await assertUsable()
})

test('time.sleep(100) is interrupted', async () => {
  const o = await interruptAfter('import time\ntime.sleep(100)')
  assertKeyboardInterrupt(o)
  if (!o.ok) assert.ok(o.error.traceback.some((f) => f.line === 4))
  await assertUsable()
})

test('a blocking pipe read is interrupted', async () => {
  assertKeyboardInterrupt(await interruptAfter('import os\nr, w = os.pipe()\nos.read(r, 1)'))
  await rt.exec('os.close(r); os.close(w)')
  await assertUsable()
})

test('select and threading.Event.wait are interrupted', async () => {
  assertKeyboardInterrupt(
    await interruptAfter('import select, os\nr2, w2 = os.pipe()\nselect.select([r2], [], [])'),
  )
  assertKeyboardInterrupt(await interruptAfter('import threading\nthreading.Event().wait()'))
  await assertUsable()
})

test('a blocked host call is interrupted, its AbortSignal fires and a late reply is dropped', async () => {
  let signal: AbortSignal | undefined
  let reply!: (v: string) => void
  rt.onHostCall((_name, _args, s) => {
    signal = s
    return new Promise((r) => (reply = r))
  })
  const o = await interruptAfter('import _vis\n_vis.host_call("slow", "[]")')
  assertKeyboardInterrupt(o)
  await until(() => signal?.aborted === true, 'the abort signal')
  reply(JSON.stringify({ ok: true, value: 'late' }))
  // The next call gets its own id and its own reply.
  rt.onHostCall(async () => JSON.stringify({ ok: true, value: 'fresh' }))
  await rt.exec('import _vis\nfresh = _vis.host_call("quick", "[]")')
  const f = await rt.eval('fresh')
  assert.equal(f.ok && f.value, '{"ok":true,"value":"fresh"}')
})

test('a guest that catches the interrupt keeps running normally afterwards', async () => {
  const o = await interruptAfter(
    'import time\ntry:\n    time.sleep(100)\nexcept KeyboardInterrupt:\n    caught = True\nfor _ in range(3):\n    time.sleep(0.03)\ndone = True',
  )
  assert.ok(o.ok, JSON.stringify(o))
  const r = await rt.eval('[caught, done]')
  assert.deepEqual(r.ok && r.value, [true, true])
})

test('an interrupt for a finished job does not hit the next job', async () => {
  const first = rt.exec('x = 1')
  await first
  assert.equal(rt.interrupt(first.job), false)
  const next = await rt.exec('import time\nfor _ in range(5):\n    time.sleep(0.01)\nafter = 2')
  assert.ok(next.ok, JSON.stringify(next))
})

test('an interrupt aimed at another job id does not land', async () => {
  let release!: (v: string) => void
  let called = false
  rt.onHostCall(() => {
    called = true
    return new Promise((r) => (release = r))
  })
  const p = rt.exec('import _vis\n_vis.host_call("w", "[]")')
  await until(() => called, 'the host call')
  assert.equal(rt.interrupt(p.job + 1), false)
  release(JSON.stringify({ ok: true, value: null }))
  assert.ok((await p).ok)
})

test('interrupts landing as the job ends never leak into the following jobs', async () => {
  for (let i = 0; i < 20; i++) {
    const p = rt.exec('for _ in range(20000):\n    pass')
    setTimeout(() => rt.interrupt(p.job), i % 3)
    await p
    const next = await rt.exec('import time\ntime.sleep(0.002)\nok = 1')
    assert.ok(next.ok, `round ${i}: ${JSON.stringify(next)}`)
  }
})
