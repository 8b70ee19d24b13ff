// Wire mode: a parent talks JSON lines over the child's fd 3 (a unix socketpair) to a
// child whose C++ reads the socket and whose interpreter thread writes the replies.
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import type { Duplex } from 'node:stream'
import { after, before, test } from 'node:test'
import { fixtures, repoRoot, tempHome, until } from './helpers.js'

tempHome()
let child: ChildProcess
let sock: Duplex
const received: any[] = []
let stderr = ''

before(async () => {
  child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), join(fixtures, 'wire-child.ts')], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  })
  child.stderr!.setEncoding('utf8').on('data', (d) => {
    stderr += d
  })
  sock = child.stdio[3] as Duplex
  createInterface({ input: sock }).on('line', (line) => received.push(JSON.parse(line)))
  // The child is ready when it answers a ping (handled by its JS).
  send({ id: 1, op: 'ping' })
  await until(() => received.some((m) => m.id === 1), `the child to start; stderr: ${stderr}`, 20000)
})

after(() => {
  child.kill('SIGKILL')
})

function send(msg: object): void {
  sock.write(`${JSON.stringify(msg)}\n`)
}

async function reply(id: number): Promise<any> {
  await until(
    () => received.some((m) => m.id === id && m.op === undefined),
    `the reply to ${id}; stderr: ${stderr}`,
  )
  return received.find((m) => m.id === id && m.op === undefined)
}

test('ops the C++ does not own reach the child JS, which answers on the same socket', async () => {
  assert.deepEqual(await reply(1), { id: 1, ok: true, value: 'pong from js' })
  send({ id: 2, op: 'no-such-op' })
  assert.equal((await reply(2)).error.code, 'worker.unknown-op')
})

test('work ops run in Python and answer directly; output precedes the reply', async () => {
  send({ id: 10, op: 'exec', code: 'x = 41\nprint("hello", x)\nimport sys\nprint("warn", file=sys.stderr)' })
  assert.deepEqual(await reply(10), { id: 10, ok: true, value: null })
  const at = received.findIndex((m) => m.id === 10 && m.op === undefined)
  const outputs = received.slice(0, at).filter((m) => m.op === 'output' && m.job === 10)
  assert.deepEqual(outputs, [
    { op: 'output', job: 10, stream: 'stdout', data: 'hello 41\n' },
    { op: 'output', job: 10, stream: 'stderr', data: 'warn\n' },
  ])
  send({ id: 11, op: 'eval', code: 'x + 1' })
  assert.deepEqual(await reply(11), { id: 11, ok: true, value: 42 })
  send({ id: 12, op: 'eval', code: '1/0' })
  assert.equal((await reply(12)).error.code, 'guest.ZeroDivisionError')
})

test('host calls from a wire job go to the parent and its reply comes back', async () => {
  send({
    id: 20,
    op: 'exec',
    code: 'import _vis, json\nr = json.loads(_vis.host_call("tools.add", json.dumps([2, 3])))',
  })
  await until(() => received.some((m) => m.op === 'host'), 'the host request')
  const req = received.find((m) => m.op === 'host')
  assert.equal(req.name, 'tools.add')
  assert.deepEqual(req.args, [2, 3])
  assert.equal(typeof req.id, 'number')
  send({ id: req.id, ok: true, value: 5 })
  assert.equal((await reply(20)).ok, true)
  send({ id: 21, op: 'eval', code: 'r' })
  assert.deepEqual((await reply(21)).value, { id: req.id, ok: true, value: 5 })
})

test('host_call args that are not JSON are refused in the child, never sent', async () => {
  const before = received.filter((m) => m.op === 'host').length
  send({ id: 25, op: 'exec', code: 'import _vis\nbad = _vis.host_call("t", "[1, ")' })
  await reply(25)
  send({ id: 26, op: 'eval', code: 'bad' })
  assert.match((await reply(26)).value, /host\.bad-args/)
  assert.equal(received.filter((m) => m.op === 'host').length, before)
})

test('an interrupt request is answered at once and lands in the running job', async () => {
  send({ id: 30, op: 'exec', code: 'print("spin", flush=True)\nwhile True:\n    pass' })
  await until(() => received.some((m) => m.op === 'output' && m.job === 30), 'the job to start')
  send({ id: 31, op: 'interrupt', job: 30 })
  assert.deepEqual(await reply(31), { id: 31, ok: true, value: true })
  assert.equal((await reply(30)).error.code, 'guest.KeyboardInterrupt')
  send({ id: 32, op: 'interrupt', job: 30 })
  assert.deepEqual(await reply(32), { id: 32, ok: true, value: false })
  send({ id: 33, op: 'eval', code: '"still alive"' })
  assert.equal((await reply(33)).value, 'still alive')
})

test('a handler that returns None sends no reply, and the next request is served', async () => {
  send({ id: 40, op: 'silent' })
  send({ id: 41, op: 'eval', code: '7 * 6' })
  assert.equal((await reply(41)).value, 42)
  assert.equal(
    received.some((m) => m.id === 40),
    false,
  )
})
