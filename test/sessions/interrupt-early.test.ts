// An interrupt sent right behind its block can reach the worker before the interpreter thread has
// started that block (the block waits its turn in the worker's queue). It must still land: the
// session sends it again until the block runs, the answer says landed, and the worker stays (no
// kill-and-replace after the grace). The HTTP API reports a block "running" from this moment on.
// Landing that early it may stop the block before its code started (while it is compiled): the
// block still ends as an interrupted block does (an outcome whose error's phase is
// "interrupted"), not with the worker op's python.interrupted failure.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { parseReply } from '../../src/protocol/parent-requests.js'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import { Worker } from '../../src/worker/worker.js'
import { normalizePolicy } from '../../src/worker/worker-policy.js'
import { python, tempHome } from './helpers.js'

const { home, root } = tempHome('interrupt-early')
let rt: Runtime

before(async () => {
  rt = await createRuntime({ home, python, pool: { size: 0 } })
})
after(async () => {
  await rt.close()
})

test('an interrupt right behind its block lands as the block starts; the worker stays', async () => {
  const s = await rt.createSession({ roots: [root] })
  await s.runBlock('x = 0')
  const pid = s.pid
  const replaced: unknown[] = []
  s.on('worker.replaced', (ev) => replaced.push(ev))
  for (let i = 0; i < 60; i++) {
    // block-started is emitted just before the block is written to the worker; a microtask
    // later it is on the socket, and the interrupt goes out right behind it.
    let answer: Promise<{ landed: boolean; retired: boolean }> | undefined
    const off = s.on('block.started', () => {
      queueMicrotask(() => {
        answer = s.interrupt()
      })
    })
    const outcome = await s.runBlock(`n = ${i}\nwhile True:\n    n += 1`, { timeoutMs: 60_000 })
    off()
    assert.ok(answer, 'the interrupt was sent')
    assert.deepEqual(await answer, { landed: true, retired: false }, `round ${i}`)
    assert.equal(outcome.error?.phase, 'interrupted', `round ${i}: ${JSON.stringify(outcome)}`)
    assert.match(outcome.error?.message ?? '', /KeyboardInterrupt/, `round ${i}`)
  }
  assert.deepEqual(replaced, [], 'no worker was replaced')
  assert.equal(s.pid, pid)
  // The session goes on with its state.
  assert.equal((await s.runBlock('x + 1')).result, 1)
})

// The race above, made certain: the interrupt lands while the worker is still reading the
// block's request, before it knows the request's id (a stand-in for the interrupt is raised
// from the worker's own JSON reader, once; a block cannot reach that module, so the worker's
// `exec` op plants it). The reply must still carry the id and read as an interrupted block;
// before, it went out with `"id": null`, a malformed frame the host answers by replacing the
// worker.
test('an interrupt landing before the request is read still answers as an interrupted block', async () => {
  const w = await Worker.start({ home, policy: normalizePolicy({ roots: [root] }), python })
  try {
    const violations: string[] = []
    const broke = new Promise<never>((_, reject) =>
      w.on('violation', ({ what }: { what: string }) => {
        violations.push(what)
        reject(new Error(`the worker broke the wire: ${what}`))
      }),
    )
    broke.catch(() => {})
    parseReply('run-block', await w.call('run-block', { request: { code: 'kept = 41' } }))
    await w.call('exec', {
      code: [
        'import vis_worker.ops as _ops',
        '_real = _ops._loads',
        'def _interrupted_once(line):',
        '    _ops._loads = _real',
        '    raise KeyboardInterrupt',
        '_ops._loads = _interrupted_once',
      ].join('\n'),
    })
    const reply = await Promise.race([w.call('run-block', { request: { code: 'kept += 1' } }), broke])
    const outcome = parseReply('run-block', reply)
    assert.equal(outcome.error?.phase, 'interrupted', JSON.stringify(outcome))
    assert.match(outcome.error?.message ?? '', /KeyboardInterrupt/)
    // The interrupted block never ran; the worker goes on with its state.
    assert.equal(parseReply('run-block', await w.call('run-block', { request: { code: 'kept' } })).result, 41)
    assert.deepEqual(violations, [])
  } finally {
    await w.close()
  }
})
