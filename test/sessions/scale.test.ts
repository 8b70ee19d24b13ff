// Many sessions at once, the warm pool, and cleanup on close, with real worker processes.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createRuntime } from '../../src/sessions/create-runtime.js'
import { isAlive, python, tempHome } from './helpers.js'

const { home, root } = tempHome('scale')

test('50 sessions run blocks concurrently with isolated globals; close leaves no worker behind', async () => {
  const rt = await createRuntime({ home, python, pool: { size: 0 } })
  const sessions = await Promise.all(Array.from({ length: 50 }, () => rt.createSession({ roots: [root] })))
  const pids = new Set(sessions.map((s) => s.pid))
  assert.equal(pids.size, 50, 'one process per session')
  await Promise.all(sessions.map((s, i) => s.runBlock(`mine = ${i}`)))
  const outs = await Promise.all(
    sessions.map((s) => s.runBlock('import time\ntime.sleep(0.01)\nprint(mine, globals().get("other"))')),
  )
  for (const [i, o] of outs.entries()) assert.equal(o.stdout, `${i} None\n`)
  assert.equal(rt.workerPids().length, 50)
  const all = sessions.flatMap((s) => s.processTree())
  await rt.close()
  for (const pid of all) assert.equal(isAlive(pid), false, `worker ${pid} is gone`)
})

test('the pool hands out a warm worker, refills, and never takes a used one back', async () => {
  const rt = await createRuntime({ home, python, pool: { size: 1 } })
  const first = await rt.createSession({ roots: [root] })
  await rt.poolSettled()
  const warm = rt.workerPids().filter((p) => p !== first.pid)
  assert.equal(warm.length, 1, 'one warm worker waits for this policy')
  const second = await rt.createSession({ roots: [root] })
  assert.equal(second.pid, warm[0], 'the session took the warm worker')
  await rt.poolSettled()
  const refilled = rt.workerPids().filter((p) => p !== first.pid && p !== second.pid)
  assert.equal(refilled.length, 1, 'the pool refilled')
  await second.dispose()
  assert.equal(isAlive(second.pid), false)
  assert.equal(rt.workerPids().includes(second.pid), false, 'a used worker never returns')
  // Another policy is a different key: no warm worker for it yet.
  const other = await rt.createSession({ roots: [root], shell: true })
  assert.notEqual(other.pid, refilled[0])
  const all = rt.workerPids()
  await rt.close()
  for (const pid of all) assert.equal(isAlive(pid), false)
  await first.dispose()
})
