// The seed-named host surface, over a real engine: its contexts are the engine's sessions, their
// definitions live in the engine's store (no file of the seed's own).
import assert from 'node:assert/strict'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createEngine, type Engine } from '../../src/engine/engine.js'
import {
  bindAndBump,
  closeSeedEngine,
  contextSessionId,
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
  useSeedEngine,
  validateNoBannedDefs,
} from '../../src/engine/seed.js'
import { isVisError } from '../../src/util/errors.js'
import { isAlive, python, tempHome } from '../sessions/helpers.js'

const { home, root } = tempHome('seed')
let engine: Engine

before(async () => {
  engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false, durability: 'normal' })
  useSeedEngine(engine)
})
after(async () => {
  await closeSeedEngine()
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
  assert.equal((await runPythonBlock('defs', 'print(triple(2))')).stdout, '6\n', 'restored from the store')
  await disposePythonContext('defs')
})

test("a context is an engine session: its blocks' definitions are in the engine's store, no file of its own", async () => {
  const key = 'one entry/with a slash'
  const id = contextSessionId(key)
  assert.match(id, /^ctx-one_entry_with_a_slash-[0-9a-f]{12}$/)
  await createPythonContext(key, { roots: [root] })
  const view = engine.sessionView(id)
  assert.deepEqual((view.policy as { roots: string[] }).roots, [root])
  await runPythonBlock(key, 'def double(x):\n    return 2 * x')
  const stored = engine.store.defs.get(id)
  assert.ok(stored, "the block's snapshot is stored as the session's")
  assert.match(JSON.stringify(stored.snapshot), /double/)
  // Before issue 35 the seed wrote <home>/sessions/<key>-<hash>/defs.json beside the database.
  assert.ok(!existsSync(join(home, 'sessions')) || readdirSync(join(home, 'sessions')).length === 0)
  // Disposing stops the worker and keeps the session open: the next create reopens it.
  await disposePythonContext(key)
  assert.equal(engine.sessionView(id).closed_at ?? null, null)
  await createPythonContext(key)
  assert.equal((await runPythonBlock(key, 'print(double(21))')).stdout, '42\n')
  await disposePythonContext(key)
})
