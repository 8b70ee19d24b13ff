// Signals inside a session block behave as in python3 (issue 22): a guest's SIGALRM-style
// timeout interrupts its own blocking call on the interpreter thread, save-and-restore of
// every handler works (getsignal never None), while the host's interrupt stays private.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import { python, tempHome } from './helpers.js'

const { home, root } = tempHome('signals')
let rt: Runtime

before(async () => {
  rt = await createRuntime({ home, python, pool: { size: 1 } })
})
after(async () => {
  await rt.close()
})

test('a block times out its own blocking select() and sleep() with signal.alarm/setitimer', async () => {
  const s = await rt.createSession({ roots: [root] })
  const r = await s.runBlock(
    [
      'import os, select, signal, time',
      'class TimedOut(Exception):',
      '    pass',
      'def on_alarm(signum, frame):',
      '    raise TimedOut(signal.Signals(signum).name)',
      'signal.signal(signal.SIGALRM, on_alarm)',
      'r, w = os.pipe()',
      'signal.setitimer(signal.ITIMER_REAL, 0.05)',
      'try:',
      '    select.select([r], [], [], 60)',
      'except TimedOut as e:',
      '    print("select interrupted by", e)',
      'signal.alarm(1)',
      'try:',
      '    time.sleep(60)',
      'except TimedOut as e:',
      '    print("sleep interrupted by", e)',
    ].join('\n'),
    { timeoutMs: 30_000 },
  )
  assert.equal(r.error, undefined)
  assert.equal(r.stdout, 'select interrupted by SIGALRM\nsleep interrupted by SIGALRM\n')
})

test('getsignal is never None, so saving and restoring handlers works; the interrupt signal stays refused', async () => {
  const s = await rt.createSession({ roots: [root] })
  const r = await s.runBlock(
    [
      'import signal',
      'print([s.name for s in signal.valid_signals() if signal.getsignal(s) is None])',
      'old = signal.getsignal(signal.SIGTERM)',
      'signal.signal(signal.SIGTERM, lambda s, f: None)',
      'signal.signal(signal.SIGTERM, old)',
      'print(signal.getsignal(signal.SIGTERM) is old)',
      'try:',
      '    signal.signal(signal.SIGRTMIN + 3, signal.SIG_IGN)',
      'except Exception as e:',
      '    print(type(e).__name__)',
    ].join('\n'),
  )
  assert.equal(r.error, undefined)
  assert.equal(r.stdout, '[]\nTrue\nProcessRefused\n')
  // The host's interrupt still stops a block.
  const pid = s.pid
  const t = await s.runBlock('import time\ntime.sleep(60)', { timeoutMs: 1000 })
  assert.equal(t.timedOut, true)
  assert.equal(t.error?.phase, 'timeout')
  // ...by the interrupt, not by a kill: the same worker serves the next block.
  assert.equal((await s.runBlock('print("after")')).stdout, 'after\n')
  assert.equal(s.pid, pid)
})
