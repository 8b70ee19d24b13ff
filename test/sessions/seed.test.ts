// The seed-named host surface, over a real runtime.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { createRuntime } from '../../src/sessions/runtime.js'
import {
  bindAndBump,
  closeSeedRuntime,
  countTopLevelForms,
  createPythonContext,
  disposePythonContext,
  forgetSessionDefs,
  interruptGuest,
  persistSessionDefs,
  pythonWorkerPids,
  restoreSessionDefs,
  retirePythonContext,
  runPythonBlock,
  setPythonBinding,
  takePartialBlockStdout,
  useSeedRuntime,
  validateNoBannedDefs,
} from '../../src/sessions/seed.js'
import { isVisError } from '../../src/util/errors.js'
import { isAlive, python, tempHome } from './helpers.js'

const { home, root } = tempHome('seed')

before(async () => {
  useSeedRuntime(await createRuntime({ home, python, pool: { size: 0 } }))
})
after(async () => {
  await closeSeedRuntime()
})

test('bindings: functions become tools, dotted names join a namespace, data crosses as JSON', async () => {
  const s = await createPythonContext('bind', { roots: [root] })
  assert.equal(await createPythonContext('bind'), s, 'the same key gives the same context')
  await setPythonBinding('bind', 'greet', (name: string) => `hello ${name}`, { signature: '(name)' })
  await setPythonBinding('bind', 'git.status', () => ({ clean: true }))
  await setPythonBinding('bind', 'git.branch', () => 'main')
  await setPythonBinding('bind', 'limits', { files: 3, names: ['a'] })
  assert.equal(await bindAndBump('bind', 'answer', 42), 1)
  assert.equal(await bindAndBump('bind', 'answer', 43), 2)
  const r = await runPythonBlock(
    'bind',
    'print(await greet("vis"), git.status()["clean"], git.branch(), limits["files"], limits["names"], answer)',
  )
  assert.equal(r.stdout, "hello vis True main 3 ['a'] 43\n")
  await assert.rejects(setPythonBinding('bind', 'bad', { when: new Date() }), (e) =>
    isVisError(e, 'boundary.not-json'),
  )
  assert.ok(pythonWorkerPids().includes(s.pid))
  assert.equal(await interruptGuest('bind'), false, 'nothing runs, so nothing lands')
  assert.equal(takePartialBlockStdout('bind'), '')
  await disposePythonContext('bind')
})

test('countTopLevelForms and validateNoBannedDefs answer from the session interpreter', async () => {
  await createPythonContext('forms', { roots: [root] })
  assert.equal(await countTopLevelForms('forms', 'a = 1\nif a:\n    b = 2\nprint(a)\n'), 3)
  await assert.rejects(countTopLevelForms('forms', 'def (:'), /SyntaxError|invalid syntax/)
  assert.equal(await validateNoBannedDefs('forms', 'x = 1'), null)
  assert.match(JSON.stringify(await validateNoBannedDefs('forms', 'import _vis')), /_vis/)
  await disposePythonContext('forms')
})

test('a retired context refuses to come back until it is disposed and rebuilt', async () => {
  const s = await createPythonContext('ret', { roots: [root] })
  retirePythonContext('ret', 'test says so')
  await assert.rejects(createPythonContext('ret'), (e) => isVisError(e, 'worker.retired'))
  await assert.rejects(runPythonBlock('ret', 'print(1)'), (e) => isVisError(e, 'worker.retired'))
  await disposePythonContext('ret')
  assert.equal(isAlive(s.pid), false)
  const again = await createPythonContext('ret', { roots: [root] })
  assert.notEqual(again.pid, s.pid)
  assert.equal((await runPythonBlock('ret', 'print("back")')).stdout, 'back\n')
  await disposePythonContext('ret')
})

test('session definitions persist, restore into a fresh worker, and forget drops only the memo', async () => {
  await createPythonContext('defs', { roots: [root] })
  await runPythonBlock('defs', 'def triple(x):\n    return 3 * x\nLIMIT = 5')
  await persistSessionDefs('defs')
  await disposePythonContext('defs')
  await createPythonContext('defs', { roots: [root] })
  await restoreSessionDefs('defs')
  assert.equal((await runPythonBlock('defs', 'print(triple(LIMIT))')).stdout, '15\n')
  assert.equal(forgetSessionDefs('defs'), true)
  await disposePythonContext('defs')
  await createPythonContext('defs', { roots: [root] })
  await restoreSessionDefs('defs')
  assert.equal((await runPythonBlock('defs', 'print(triple(2))')).stdout, '6\n', 'restored from the file')
  await disposePythonContext('defs')
})
