import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { probe } from '../../src/confinement/probe.js'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import type { Session } from '../../src/sessions/session.js'
import { waitGone } from '../../src/worker/proctree.js'

// Resource limits through real sessions, with the values a session sets (see the policy's
// `limits` and SECURITY.md). Thread, fd, fork and disk bombs are catalogue cases
// (cases.ts, run by sessions.test.ts); here: memory, wall clock and output, whose
// containment is reported to the caller in a particular way.
let rt: Runtime
let home: string
const roots: string[] = []
let bystander: Session

async function open(limits: Record<string, number> = {}): Promise<Session> {
  const root = mkdtempSync(join(tmpdir(), 'vis-limits-root-'))
  roots.push(root)
  // A short wall clock unless the test sets one: a hang fails in seconds.
  return rt.createSession({ roots: [root], limits: { wallClockMs: 30_000, ...limits } })
}

function failure(p: Promise<unknown>): Promise<{ code?: string; message?: string } | undefined> {
  return p.then(
    () => undefined,
    (e: { code?: string; message?: string }) => e,
  )
}

before(async () => {
  home = mkdtempSync(join(tmpdir(), 'vis-home-'))
  process.env.VIS_HOME = home
  rt = await createRuntime({ python: '3.11', pool: { size: 0 }, defaultTools: false })
  bystander = await open()
})
after(async () => {
  const r = await bystander.runBlock('6 * 7')
  assert.equal(r.result, 42, 'the bystander session outlived every bomb')
  await rt.close()
  for (const r2 of roots) rmSync(r2, { recursive: true, force: true })
  rmSync(home, { recursive: true, force: true })
})

test('a memory bomb is killed by the memory limit and reported as such', async () => {
  const s = await open({ memoryMb: 256 })
  const tree = s.processTree()
  const err = await failure(
    s.runBlock(
      'chunks = []\nwhile True:\n    chunks.append(bytearray(64 << 20))\n    chunks[-1][::4096] = b"x" * len(chunks[-1][::4096])',
    ),
  )
  assert.equal(err?.code, 'worker.died')
  assert.match(err?.message ?? '', /killed by the memory limit \(256 MB\): out of memory/)
  assert.equal(s.state, 'retired')
  assert.match(s.retiredReason ?? '', /memory limit/)
  assert.ok(await waitGone(tree), 'the whole worker tree is gone')
  const again = await failure(s.runBlock('1'))
  assert.equal(again?.code, 'worker.retired')
  await s.dispose()
})

test('the wall clock SIGKILLs the tree of a block that swallows interrupts; a fresh worker takes over', async () => {
  const s = await open({ wallClockMs: 2000 })
  const tree = s.processTree()
  assert.ok(tree.length >= 1)
  // Interrupts (runBlock's timeoutMs) cannot stop this one; the grace kill or the wall clock can.
  const r = await s.runBlock(
    'while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass',
    {
      timeoutMs: 500,
    },
  )
  assert.equal(r.timedOut, true)
  assert.equal(r.error?.phase, 'timeout')
  assert.equal(r.workerReplaced, true)
  assert.equal(s.state, 'ready')
  assert.ok(await waitGone(tree), 'every process of the worker is gone')
  assert.match(
    r.error?.message ?? '',
    /wall clock limit of 2000 ms|did not stop within \d+ ms of being interrupted/,
  )
  assert.equal((await s.runBlock('print("fresh")')).stdout, 'fresh\n')
  await s.dispose()
})

test('the wall clock alone ends a block nobody interrupts', async () => {
  const s = await open({ wallClockMs: 1500 })
  const tree = s.processTree()
  const r = await s.runBlock('import time\nprint("started", flush=True)\ntime.sleep(3600)')
  assert.equal(r.timedOut, true)
  assert.match(r.error?.message ?? '', /wall clock limit of 1500 ms; its worker was killed/)
  assert.match(r.stdout ?? '', /started/)
  assert.ok(await waitGone(tree))
  await s.dispose()
})

test('an output bomb is capped with a visible marker', async () => {
  const s = await open({ outputBytes: 65536 })
  const rss0 = process.memoryUsage().rss
  const r = await s.runBlock("for i in range(200_000):\n    print('x' * 100)")
  assert.equal(r.error, undefined)
  const out = r.stdout ?? ''
  assert.ok(out.length <= 65536 + 1024 + 200, `${out.length} characters`)
  assert.match(out, /\[output truncated: \d+ more bytes not shown/)
  assert.equal(s.state, 'ready')
  process.stdout.write(
    `# output bomb: 20 MB printed, ${out.length} characters kept, host rss +${((process.memoryUsage().rss - rss0) >> 20).toString()} MiB\n`,
  )
  await s.dispose()
})

test('output written around the guest cap is capped by the host, and a flood retires the worker', async () => {
  const s = await open({ outputBytes: 65536 })
  // Under the flood bound: the host truncates what the guest's own capture never saw.
  const r = await s.runBlock(
    "t = sys.stdout._target\nfor i in range(2000):\n    t.write('z' * 1000 + '\\n')\nprint('done')",
  )
  assert.equal(r.error, undefined)
  assert.match(r.stdout ?? '', /\[output truncated by the host: \d+ more characters not shown/)
  const streamed: string[] = []
  s.on('output', (ev) => streamed.push(ev.data))
  // Far past it: the worker is retired instead of streaming forever.
  const err = await failure(
    s.runBlock("t = sys.stdout._target\nwhile True:\n    t.write('z' * 100000 + '\\n')"),
  )
  assert.equal(err?.code, 'worker.retired')
  assert.match(s.retiredReason ?? '', /printed over \d+ characters past the output cap/)
  const total = streamed.reduce((n, d) => n + d.length, 0)
  assert.ok(total <= 65536 + 1024, `${total} characters streamed to subscribers`)
  await s.dispose()
})

test('an endless print loop stops at the timeout with its output capped', async () => {
  const s = await open({ outputBytes: 65536 })
  const r = await s.runBlock("while True:\n    print('y' * 1000)", { timeoutMs: 1000 })
  assert.equal(r.timedOut, true)
  assert.ok((r.stdout ?? '').length <= 65536 + 1024 + 200)
  assert.equal(s.state, 'ready', 'an interrupt that lands keeps the session')
  await s.dispose()
})

test("a session's limits reach its jail; the defaults are the ones published", async () => {
  const s = await open({ openFiles: 64, processes: 48, diskMb: 8 })
  const r = await s.runBlock(
    'import resource\n[resource.getrlimit(r) for r in (resource.RLIMIT_NOFILE, resource.RLIMIT_NPROC, resource.RLIMIT_FSIZE)]',
  )
  assert.deepEqual(r.result, [
    [64, 64],
    [48, 48],
    [8 << 20, 8 << 20],
  ])
  await s.dispose()
  const d = await open()
  const r2 = await d.runBlock('import resource\nresource.getrlimit(resource.RLIMIT_FSIZE)[1]')
  assert.equal(r2.result, 1024 << 20)
  await d.dispose()
  const line = probe({ fresh: true }).checks.find((c) => c.id === 'limits')?.message ?? ''
  assert.match(
    line,
    /memory 1024 MB .* 128 processes\+threads, 256 open files, 1024 MB per file .* wall clock 300 s .* output 1048576 bytes/,
  )
})
