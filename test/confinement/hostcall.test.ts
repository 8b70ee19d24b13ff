import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import type { Session } from '../../src/sessions/session.js'
import { DEFAULT_MAX_CONCURRENT_HOST_CALLS, MAX_QUEUED_HOST_CALLS } from '../../src/sessions/tool-table.js'

// Abuse of the host-call channel by guest code that has the worker's socket (fd 3) in
// reach. The rule, also in SECURITY.md: a call the guest runtime could make is answered
// with a refusal (unknown tool, prototype names, unknown ops, calls past the queue; calls
// over the size or depth cap are refused in the guest before they are sent, and the host
// refuses too-deep frames written raw); a frame only guest code writing on the socket
// could make (not JSON, over the size cap, a reply to a request never made, a malformed
// block outcome) retires the worker. Either way the host and every other session carry on.

type Note = { session: string; args: unknown[] }
let rt: Runtime
let home: string
const roots: string[] = []
const notes: Note[] = []

// The guest side: the runtime's own door to the host, reached around its import ban
// (a Python-level nicety), and raw writes on the socket the addon reads.
const RAW = `import json, os
_vis = __import__('_' + 'vis')
def raw(msg):
    data = (msg if isinstance(msg, str) else json.dumps(msg)) + '\\n'
    view = memoryview(data.encode())
    while view:
        view = view[os.write(3, view):]
`

async function open(): Promise<Session> {
  const root = mkdtempSync(join(tmpdir(), 'vis-hc-root-'))
  roots.push(root)
  // A short wall clock: a hang fails the test in seconds, not in the default 300 s.
  const s = await rt.createSession({ roots: [root], limits: { wallClockMs: 30_000 } })
  await s.bind('note', (...args: unknown[]) => {
    const ctx = args.pop() as { sessionId: string }
    notes.push({ session: ctx.sessionId, args })
    return args.length
  })
  const r = await s.runBlock(RAW)
  assert.equal(r.error, undefined, JSON.stringify(r))
  return s
}

// The guest's reply to a call it made through _vis, as JSON.
async function hostCall(s: Session, name: string, argsJson = '[]'): Promise<any> {
  const r = await s.runBlock(`print(_vis.host_call(${JSON.stringify(name)}, ${JSON.stringify(argsJson)}))`)
  assert.equal(r.error, undefined, JSON.stringify(r))
  return JSON.parse(r.stdout ?? '')
}

async function stillServes(s: Session): Promise<void> {
  const r = await s.runBlock('note("alive")\n6 * 7')
  assert.equal(r.result, 42, JSON.stringify(r))
}

let bystander: Session
before(async () => {
  home = mkdtempSync(join(tmpdir(), 'vis-home-'))
  process.env.VIS_HOME = home
  rt = await createRuntime({ python: '3.11', pool: { size: 0 }, defaultTools: false })
  bystander = await open()
})
after(async () => {
  await rt.close()
  for (const r of roots) rmSync(r, { recursive: true, force: true })
  rmSync(home, { recursive: true, force: true })
})

test('a forged session: a call cannot be made in another session', async () => {
  const a = await open()
  notes.length = 0
  // Naming another session is not part of the envelope: refused, served nowhere.
  await a.runBlock(
    `raw({"id": 900001, "op": "host", "name": "note", "args": ["forged"], "session": ${JSON.stringify(bystander.id)}})\nimport time; time.sleep(0.2)`,
  )
  assert.deepEqual(notes, [])
  assert.match(readFileSync(a.logPath, 'utf8'), /refused invalid host request \(id 900001\)/)
  // A well-formed raw call is served, but always as the session bound to that socket.
  await a.runBlock(
    `raw({"id": 900002, "op": "host", "name": "note", "args": ["raw"]})\nimport time; time.sleep(0.2)`,
  )
  assert.deepEqual(notes, [{ session: a.id, args: ['raw'] }])
  assert.equal(a.state, 'ready')
  await stillServes(a)
  await a.dispose()
})

test('an unknown tool and prototype names are refused as unbound tools', async () => {
  const a = await open()
  for (const name of [
    'rm_rf',
    '__proto__',
    'constructor',
    'toString',
    'hasOwnProperty',
    '__defineGetter__',
  ]) {
    const reply = await hostCall(a, name)
    assert.equal(reply.ok, false, name)
    assert.equal(reply.error.code, 'tool.unbound', name)
  }
  assert.equal(a.state, 'ready')
  await stillServes(a)
  await a.dispose()
})

test('prototype keys in arguments stay plain data and pollute nothing', async () => {
  const a = await open()
  notes.length = 0
  const r = await a.runBlock(
    `note({"__proto__": {"polluted": 1}, "constructor": {"prototype": {"polluted": 2}}, "toString": 3})`,
  )
  assert.equal(r.error, undefined, JSON.stringify(r))
  const arg = notes[0]?.args[0] as Record<string, unknown>
  assert.ok(Object.hasOwn(arg, '__proto__'), 'the key arrives as an own property')
  assert.equal(Object.getPrototypeOf(arg), Object.prototype)
  assert.equal(({} as Record<string, unknown>).polluted, undefined)
  assert.equal(typeof ({} as { toString: unknown }).toString, 'function')
  await a.dispose()
})

test('deeply nested frames are refused, and a pathological one costs only its worker', async () => {
  const a = await open()
  // Through the runtime's door the call is refused before it is sent...
  const viaVis = await a.runBlock(
    `try:\n    _vis.host_call("note", ${JSON.stringify(`${'['.repeat(200)}${']'.repeat(200)}`)})\nexcept _vis.HostCallTooLarge as e:\n    print(e)`,
  )
  assert.match(viaVis.stdout ?? '', /note: the call's arguments nest 200 levels deep/)
  // ...and the host refuses the same frame written on the socket, keeping the worker.
  notes.length = 0
  await a.runBlock(
    `raw('{"id": 900006, "op": "host", "name": "note", "args": ' + '[' * 200 + ']' * 200 + '}')\nimport time; time.sleep(0.2)`,
  )
  assert.match(readFileSync(a.logPath, 'utf8'), /nested deeper than 64/)
  assert.deepEqual(notes, [])
  assert.equal(a.state, 'ready')
  // A million levels in one raw frame: the host must neither crash nor serve it.
  notes.length = 0
  await a
    .runBlock(
      `raw('{"id": 900003, "op": "host", "name": "note", "args": ' + '[' * 1000000 + ']' * 1000000 + '}')\nimport time; time.sleep(0.3)`,
    )
    .catch(() => undefined)
  assert.deepEqual(notes, [])
  await stillServes(bystander)
  await a.dispose()
})

test('an oversized frame retires the worker that sent it', async () => {
  const a = await open()
  const err = await a
    .runBlock(
      `raw('{"id": 900004, "op": "host", "name": "note", "args": ["' + 'x' * (17 << 20) + '"]}')\nimport time; time.sleep(5)`,
    )
    .then(
      () => undefined,
      (e: { code?: string }) => e,
    )
  assert.equal(err?.code, 'worker.retired')
  assert.equal(a.state, 'retired')
  assert.match(a.retiredReason ?? '', /frame over the size cap/)
  await stillServes(bystander)
  await a.dispose()
})

test('a malformed line retires the worker that wrote it', async () => {
  const a = await open()
  const err = await a.runBlock(`raw('this is not json')\nimport time; time.sleep(5)`).then(
    () => undefined,
    (e: { code?: string }) => e,
  )
  assert.equal(err?.code, 'worker.retired')
  assert.match(a.retiredReason ?? '', /malformed frame/)
  await stillServes(bystander)
  await a.dispose()
})

test('an op the host does not serve is refused, and the worker keeps going', async () => {
  const a = await open()
  await a.runBlock(`raw({"id": 900005, "op": "exec", "code": "import os"})\nimport time; time.sleep(0.2)`)
  assert.match(readFileSync(a.logPath, 'utf8'), /refused unknown op "exec" \(id 900005\)/)
  assert.equal(a.state, 'ready')
  await stillServes(a)
  await a.dispose()
})

test('forged replies: to a request never made, or a block answered with junk, retire the worker', async () => {
  const a = await open()
  const stray = await a
    .runBlock(`raw({"id": 99999999, "ok": True, "value": None})\nimport time; time.sleep(5)`)
    .then(
      () => undefined,
      (e: { code?: string }) => e,
    )
  assert.equal(stray?.code, 'worker.retired')
  assert.match(a.retiredReason ?? '', /reply to a request never made/)
  await a.dispose()
  // Answering the host's own pending requests (the running block among them) with a value
  // that is no block outcome: the worker is retired with a clear error.
  const b = await open()
  const junk = await b
    .runBlock(
      `for i in range(1, 40):\n    raw({"id": i, "ok": True, "value": 5})\nimport time; time.sleep(5)`,
    )
    .then(
      () => undefined,
      (e: { code?: string }) => e,
    )
  assert.ok(junk?.code === 'worker.protocol' || junk?.code === 'worker.retired', String(junk?.code))
  assert.equal(b.state, 'retired')
  await stillServes(bystander)
  await b.dispose()
})

test('a flood of calls: never more than the limit at once, the queue bounded, the rest refused', async () => {
  const a = await open()
  let active = 0
  let peak = 0
  let runs = 0
  await a.bind('slow', async () => {
    runs++
    peak = Math.max(peak, ++active)
    await new Promise((r) => setTimeout(r, 10))
    active--
    return runs
  })
  // Through the guest runtime: 100 concurrent calls all complete, at most the limit at once.
  const r = await a.runBlock(
    'import asyncio\nrs = await asyncio.gather(*(slow() for _ in range(100)))\nlen(rs)',
  )
  assert.equal(r.result, 100, JSON.stringify(r))
  assert.ok(peak <= DEFAULT_MAX_CONCURRENT_HOST_CALLS, `peak ${peak}`)
  // Raw: 3000 calls at once, held at a gate. The limit runs, the queue fills, and the
  // rest are refused at once; opening the gate drains exactly the queued ones.
  let release = () => {}
  const gate = new Promise<void>((r) => {
    release = r
  })
  let held = 0
  await a.bind('held', async () => {
    held++
    await gate
  })
  await a.runBlock(
    `for i in range(3000):\n    raw({"id": 1000000 + i, "op": "host", "name": "held", "args": []})\nimport time; time.sleep(0.5)`,
  )
  assert.equal(held, DEFAULT_MAX_CONCURRENT_HOST_CALLS)
  release()
  const bound = DEFAULT_MAX_CONCURRENT_HOST_CALLS + MAX_QUEUED_HOST_CALLS
  for (let i = 0; i < 200 && held < bound; i++) await new Promise((r2) => setTimeout(r2, 10))
  await new Promise((r2) => setTimeout(r2, 100))
  assert.equal(held, bound)
  assert.equal(a.state, 'ready')
  await stillServes(bystander)
  await a.dispose()
})

test('a forged block answer cannot claim what only the host says: timedOut, workerReplaced, survived', async () => {
  const a = await open()
  // The guest learns its own block's request id (the test hands it over on stdin) and answers
  // that request itself, before the runtime does, claiming a timeout and a worker replacement.
  const forged = JSON.stringify({
    stdout: 'forged\n',
    timedOut: true,
    workerReplaced: true,
    survived: {
      cause: 'timeout',
      worker_replaced: true,
      intact: [],
      restored: [],
      lost: ['x'],
      cancelled: [],
    },
  })
  const running = a.runBlock(
    `job = int(input())\nraw({"id": job, "ok": True, "value": json.loads(${JSON.stringify(forged)})})\nimport time; time.sleep(1)`,
  )
  const current = () => (a as unknown as { current?: { job: number } }).current?.job
  while (current() === undefined) await new Promise((r) => setImmediate(r))
  await a.writeStdin(`${current()}\n`)
  const r = await running
  // The forged answer is the block's (the guest controls its own result), but the host-owned
  // fields are dropped with every other key the guest's schema does not declare.
  assert.equal(r.stdout, 'forged\n')
  assert.equal(r.timedOut, undefined, JSON.stringify(r))
  assert.equal(r.workerReplaced, undefined)
  assert.equal(r.survived, undefined)
  await a.dispose()
})
