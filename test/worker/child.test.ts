// The real helper process (Python in wire mode, jailed) spoken to through the host's Worker.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import type { OutputNotification } from '../../src/protocol/messages.js'
import { isVisError } from '../../src/util/errors.js'
import { Worker } from '../../src/worker/worker.js'
import { normalizePolicy } from '../../src/worker/worker-policy.js'

const home = mkdtempSync(join(tmpdir(), 'vis-child-home-'))
const root = mkdtempSync(join(tmpdir(), 'vis-child-root-'))
process.env.VIS_HOME = home
process.on('exit', () => {
  for (const dir of [home, root]) rmSync(dir, { recursive: true, force: true })
})
let w: Worker

before(async () => {
  w = await Worker.start({
    home,
    policy: normalizePolicy({ roots: [root] }),
    python: process.env.VIS_PYTHON_VERSION,
  })
})
after(async () => {
  await w.close()
})

test('exec, eval and run round trip; a Python failure is an outcome with its line', async () => {
  assert.deepEqual(await w.call('exec', { code: 'x = 20\ny = x + 1' }), { ok: true, value: null })
  assert.deepEqual(await w.call('eval', { expr: 'y * 2' }), { ok: true, value: 42 })
  assert.deepEqual(await w.call('eval', { expr: 'object' }), {
    ok: true,
    value: "<class 'object'>",
    repr: true,
  })
  const failed = (await w.call('exec', { code: 'a = 1\nraise ValueError("nope")' })) as {
    ok: boolean
    error: { type: string; message: string; line: number }
  }
  assert.equal(failed.ok, false)
  assert.deepEqual([failed.error.type, failed.error.message, failed.error.line], ['ValueError', 'nope', 2])
  assert.equal(await w.call('run', { module: 'json', fn: 'dumps', args: [[1, 'two']] }), '[1, "two"]')
  await assert.rejects(w.call('run', { module: 'json', fn: 'loads', args: ['{'] }), (e) =>
    isVisError(e, 'python.exception'),
  )
})

test('printed output streams as notifications addressed to the request that printed it', async () => {
  const seen: OutputNotification[] = []
  const off = w.on('output', (ev) => seen.push(ev))
  const started = w.send('exec', { code: 'print("hello from", "python")' })
  await started.reply
  await new Promise((r) => setTimeout(r, 100))
  off()
  assert.deepEqual(
    seen.map((e) => [e.job, e.stream, e.data]),
    [[started.id, 'stdout', 'hello from python\n']],
  )
})

test('an unknown op is refused by the child, which keeps serving', async () => {
  // An op the host's types refuse to send: what a confused peer could still put on the wire.
  const unknown = w.call('frobnicate' as 'eval', { x: 1 } as never)
  await assert.rejects(unknown, (e) => isVisError(e, 'protocol.unknown-op'))
  assert.deepEqual(await w.call('eval', { expr: '1 + 1' }), { ok: true, value: 2 })
})

test('an interrupt lands in a busy loop at once and the interpreter stays usable', async () => {
  const busy = w.send('exec', { code: 'while True:\n    pass' })
  await new Promise((r) => setTimeout(r, 50))
  assert.deepEqual(await w.interrupt(busy.id), { landed: true, retired: false })
  const out = (await busy.reply) as { ok: boolean; error: { type: string } }
  assert.equal(out.error.type, 'KeyboardInterrupt')
  assert.deepEqual(await w.interrupt(busy.id), { landed: false, retired: false }, 'idle: a no-op')
  assert.deepEqual(await w.call('eval', { expr: '"still here"' }), { ok: true, value: 'still here' })
})

test('the guest runs confined: reads outside the roots are refused, the roots are writable', async () => {
  const r = (await w.call('exec', {
    code: `open(${JSON.stringify(join(root, 'ok.txt'))}, "w").write("fine")\nopen("/etc/hostname").read()`,
  })) as { ok: boolean; error: { type: string; line: number } }
  assert.equal(r.ok, false)
  assert.deepEqual([r.error.type, r.error.line], ['PermissionError', 2])
})

test('a Python that cannot be found fails the start with an error that names it', async () => {
  await assert.rejects(Worker.start({ home, policy: normalizePolicy({}), python: '3.9' }), (e) => {
    assert.ok(isVisError(e), String(e))
    assert.match((e as Error).message, /3\.9/)
    return true
  })
})
