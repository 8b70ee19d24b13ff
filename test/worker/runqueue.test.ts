// RunQueueProbe: the run-queue wait of the threads on a path, read from schedstat; what
// `vis bench` uses to say how much of a tail is waiting for a CPU.
import assert from 'node:assert/strict'
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { test } from 'node:test'
import { RunQueueProbe, tailWaitShare, withoutWaits } from '../../src/worker/runqueue.js'

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

function child(code: string): ChildProcess {
  return spawn(process.execPath, ['-e', code], { stdio: 'ignore' })
}

test('busy threads sharing one CPU are found and their run-queue wait grows; an idle one is left out', async () => {
  // Two busy loops pinned to one CPU: each waits while the other runs. A sleeper does no work.
  const busy = [child('for (;;) {}'), child('for (;;) {}')]
  const idle = spawn('sleep', ['600'], { stdio: 'ignore' })
  try {
    for (const c of busy) {
      assert.equal(spawnSync('taskset', ['-a', '-p', '-c', '0', String(c.pid)]).status, 0)
    }
    const idleOnly = await RunQueueProbe.busyThreads([idle.pid!], () => sleep(300))
    // Only this process's own thread can move here (it runs the timers); never the sleeper's.
    assert.ok(idleOnly.threads <= 1, `threads = ${idleOnly.threads}`)
    idleOnly.close()
    const probe = await RunQueueProbe.busyThreads([busy[0]!.pid!, busy[1]!.pid!], () => sleep(300))
    assert.ok(probe.threads >= 2, `threads = ${probe.threads}`)
    const w0 = probe.waitedUs()
    await sleep(500)
    const waited = probe.waitedUs() - w0
    // Two loops on one CPU for 0.5 s: together they wait about 0.5 s; well above 0.1 s in any case.
    assert.ok(waited > 100_000, `waited ${waited} us`)
    probe.close()
  } finally {
    for (const c of [...busy, idle]) c.kill('SIGKILL')
  }
})

test('the tail share counts the slowest 1% whose wait covers half their excess over the median', () => {
  const lat = Array.from({ length: 200 }, () => 50)
  const wait = Array.from({ length: 200 }, () => 0)
  // The two slowest (the top 1% of 200): one waited most of its excess, one did not wait.
  lat[10] = 1050
  wait[10] = 900
  lat[20] = 1050
  wait[20] = 100
  assert.equal(tailWaitShare(lat, wait), 0.5)
  wait[20] = 500
  assert.equal(tailWaitShare(lat, wait), 1)
  assert.deepEqual(withoutWaits([100, 30], [40, 50]), [60, 0])
})
