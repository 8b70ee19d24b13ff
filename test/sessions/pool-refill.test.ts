// The warm pool refills once a session is set up, never beside its setup (a worker's start
// takes the CPU that setup needs), and still refills after a setup that failed.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createRuntime } from '../../src/sessions/create-runtime.js'
import type { Tool } from '../../src/tools/types.js'
import { children, python, tempHome } from './helpers.js'

const { home, root } = tempHome('pool-refill')

test('taking a warm worker starts no process until the session is set up; then the pool refills', async () => {
  const rt = await createRuntime({ home, python, pool: { size: 1 } })
  try {
    // The first session of a policy is cold and starts warming its key.
    const first = await rt.createSession({ roots: [root] })
    await rt.poolSettled()
    for (let round = 0; round < 3; round++) {
      const before = children()
      const s = await rt.createSession({ roots: [root] })
      const after = children()
      assert.ok(before.has(s.pid), 'the session took the worker that was waiting warm')
      assert.deepEqual(
        [...after].filter((pid) => !before.has(pid)),
        [],
        'no worker was started while the session was being set up',
      )
      await rt.poolSettled()
      const refilled = rt.workerPids().filter((pid) => !before.has(pid))
      assert.equal(refilled.length, 1, 'the pool started one worker once the session was returned')
      assert.deepEqual(await s.runBlock('print("ready")'), { stdout: 'ready\n' })
      await s.dispose()
    }
    await first.dispose()
  } finally {
    await rt.close()
  }
})

test('a session whose setup fails still leaves the pool refilled, and the next one is served warm', async () => {
  const broken: Tool = {
    name: 'broken tool',
    doc: 'not a Python identifier, so binding it is refused',
    signature: '()',
    run: async () => null,
  }
  const rt = await createRuntime({ home, python, pool: { size: 1 }, tools: [broken] })
  try {
    await assert.rejects(rt.createSession({ roots: [root] }), /not a Python identifier/)
    await rt.poolSettled()
    const warm = rt.workerPids()
    assert.equal(warm.length, 1, 'a warm worker waits after the failed setup')
    await assert.rejects(rt.createSession({ roots: [root] }), /not a Python identifier/)
    assert.equal(rt.workerPids().includes(warm[0]!), false, 'the failed session took the warm worker')
    await rt.poolSettled()
    assert.equal(rt.workerPids().length, 1, 'and the pool refilled again')
  } finally {
    await rt.close()
  }
})
