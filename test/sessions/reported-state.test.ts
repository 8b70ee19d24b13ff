// Issue 15 §5: a block's outcome carries the session state the host keeps (the defs
// snapshot, the session's own names, the working directory) only when it changed since the
// worker last reported it. Through real sessions: the raw guest reply is read with
// callModule (the same guest function a block runs), and the host side through what a
// replacement worker restores after a kill.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { parseGuestOutcome } from '../../src/protocol/run-block.js'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import type { Session } from '../../src/sessions/session.js'
import { python, tempHome } from './helpers.js'

const { home, root } = tempHome('reported')

type Raw = {
  stdout?: string
  result?: unknown
  error?: { message: string; phase?: string }
  snapshot?: { items: Array<{ name: string; source: string }> }
  names?: string[]
  cwd?: string
}

let rt: Runtime
before(async () => {
  rt = await createRuntime({ home, python, pool: { size: 0 } })
})
after(async () => {
  await rt.close()
})

// The guest's own reply to a block, before the host takes its state out.
const raw = (s: Session, code: string) =>
  s.callModule('vis_guest.api', 'run_block', [{ code }]) as Promise<Raw>

const sources = (r: Raw) => Object.fromEntries((r.snapshot?.items ?? []).map((i) => [i.name, i.source]))

describe('the guest reports its state only when it changed', () => {
  test('snapshot, names and cwd: sent once, then only after a change', async () => {
    const s = await rt.createSession({ roots: [root] })
    try {
      const first = await raw(s, 'def sq(x):\n    return x * x\nK = 4')
      assert.equal(sources(first).K, 'K = 4')
      assert.match(sources(first).sq ?? '', /^def sq\(x\):/)
      assert.deepEqual(first.names?.filter((n) => n !== 'session').sort(), ['K', 'sq'])
      assert.equal(first.cwd, root)

      // Nothing the host keeps changed: the reply carries none of it.
      const same = await raw(s, 'print(sq(K))')
      assert.deepEqual(same, { stdout: '16\n' })
      // Rebinding a name to the same value changes nothing either.
      assert.deepEqual(await raw(s, 'K = 4'), {})

      // A changed constant: the snapshot again (names and cwd did not change).
      const k5 = await raw(s, 'K = 5')
      assert.equal(sources(k5).K, 'K = 5')
      assert.equal(k5.names, undefined)
      assert.equal(k5.cwd, undefined)
      // 1 and True are equal but not the same definition.
      assert.equal(sources(await raw(s, 'K = 1')).K, 'K = 1')
      assert.equal(sources(await raw(s, 'K = True')).K, 'K = True')

      // A list mutated in place (the name still holds the same object) is a change too.
      assert.equal(sources(await raw(s, 'L = [1]')).L, 'L = [1]')
      const mutated = await raw(s, 'L.append(2)')
      assert.equal(sources(mutated).L, 'L = [1, 2]')
      assert.equal(mutated.names, undefined)

      // A new name: names and snapshot; a deleted one too.
      const added = await raw(s, 'obj = object()')
      assert.ok(added.names?.includes('obj'))
      assert.equal(added.snapshot, undefined, 'a plain object is not in the snapshot')
      const deleted = await raw(s, 'del sq')
      assert.ok(!deleted.names?.includes('sq'))
      assert.equal(sources(deleted).sq, undefined)

      // Changing directory reports the new one, once.
      const moved = await raw(s, 'import os\nos.makedirs("sub", exist_ok=True)\nos.chdir("sub")')
      assert.equal(moved.cwd, `${root}/sub`)
      assert.equal((await raw(s, 'pass')).cwd, undefined)
      await raw(s, 'os.chdir("..")')
    } finally {
      await s.dispose()
    }
  })

  test('the host keeps the last snapshot it got, and a replaced worker restores the latest defs', async () => {
    const s = await rt.createSession({ roots: [root] })
    try {
      const r1 = await s.runBlock('def sq(x):\n    return x * x\nLIMIT = 3\nprint("ok")')
      assert.equal(r1.stdout, 'ok\n')
      assert.equal('snapshot' in r1, false, 'the caller never sees the snapshot')
      const kept = s.lastSnapshot
      assert.ok(kept)
      // Unchanged: nothing crossed, the host still holds the same snapshot object.
      await s.runBlock('print(sq(LIMIT))')
      assert.equal(s.lastSnapshot, kept)
      // Changed: a new one.
      await s.runBlock('LIMIT = 5')
      assert.notEqual(s.lastSnapshot, kept)
      const latest = s.lastSnapshot
      // Several blocks that leave it alone, then one that must be killed.
      await s.runBlock('y = [sq(2)] * 3000  # too big for the snapshot')
      await s.runBlock('del y')
      assert.equal(s.lastSnapshot, latest)
      const oldPid = s.pid
      const killed = await s.runBlock(
        'import hashlib\nhashlib.pbkdf2_hmac("sha256", b"pw", b"salt", 10**9)',
        {
          timeoutMs: 300,
        },
      )
      assert.equal(killed.workerReplaced, true)
      assert.notEqual(s.pid, oldPid)
      // The killed block never reported: its own import is not among them.
      assert.deepEqual([...(killed.survived?.restored ?? [])].sort(), ['LIMIT', 'sq'])
      // The fresh worker has the latest defs (LIMIT = 5, not the first block's 3).
      const next = await s.runBlock('sq(LIMIT)')
      assert.equal(next.result, 25, JSON.stringify(next.error))
      // The fresh worker reported its own state once; the next unchanged block sends none.
      assert.deepEqual(await raw(s, 'print(LIMIT)'), { stdout: '5\n' })
    } finally {
      await s.dispose()
    }
  })
})

describe('a report that never reached the host', () => {
  test('a block whose reply failed leaves the next block to report everything', async () => {
    const s = await rt.createSession({ roots: [root] })
    try {
      await raw(s, 'A = 1')
      // The next report fails once inside the guest's own bookkeeping, as an interrupt
      // landing right after the block would (the raw exec op patches the guest runtime).
      const patch = [
        'import vis_guest.snapshot as _snap',
        '_real = _snap.changed',
        'def _fail_once(rt):',
        '    _snap.changed = _real',
        '    raise KeyboardInterrupt',
        '_snap.changed = _fail_once',
      ].join('\n')
      assert.deepEqual(await s.exec(patch), { ok: true, value: null })
      // The block ends as an interrupted one, without the state it could not report.
      const failed = await raw(s, 'A = 2')
      assert.equal(failed.error?.phase, 'interrupted', JSON.stringify(failed))
      assert.equal(failed.snapshot, undefined)
      const next = await raw(s, 'pass')
      assert.equal(sources(next).A, 'A = 2', 'the state the failed reply carried comes again')
      assert.ok(next.names?.includes('A'))
      assert.equal(next.cwd, root)
    } finally {
      await s.dispose()
    }
  })
})

describe('changes made between blocks are seen by the next one', () => {
  // s.eval is the raw op: it neither restores the runtime nor reports anything, so it can
  // watch what a thread the block left running does after the block returned.
  const until = async (s: Session, expr: string) => {
    const t0 = Date.now()
    while (((await s.eval(expr)) as { value: unknown }).value !== true) {
      if (Date.now() - t0 > 20_000) throw new Error(`timed out waiting for ${expr}`)
      await new Promise((r) => setTimeout(r, 20))
    }
  }
  const later = (what: string) =>
    `import threading, time\ndef _later():\n    time.sleep(0.05)\n    ${what}\nthreading.Thread(target=_later).start()`

  test('a builtin clobbered by a thread after its block is restored for the next block', async () => {
    const s = await rt.createSession({ roots: [root] })
    try {
      // abs: the raw ops this test polls with (json, len) must keep working meanwhile.
      await s.runBlock(later('__import__("builtins").abs = None'))
      await until(s, '__import__("builtins").abs is None')
      const r = await s.runBlock('abs(-2)')
      assert.equal(r.result, 2, JSON.stringify(r.error))
    } finally {
      await s.dispose()
    }
  })

  test("a global rebound by a thread after its block is in the next block's snapshot", async () => {
    const s = await rt.createSession({ roots: [root] })
    try {
      await raw(s, 'K = 1')
      await raw(s, later('global K\n    K = 9'))
      await until(s, 'K == 9')
      const r = await raw(s, 'pass')
      assert.equal(sources(r).K, 'K = 9')
      assert.deepEqual(await raw(s, 'pass'), {})
    } finally {
      await s.dispose()
    }
  })
})

describe('the host validates outcomes without zod when they have the common shape', () => {
  test('common shapes pass as they are', () => {
    for (const v of [
      {},
      { stdout: 'hi\n' },
      { result: [1, { a: null }] },
      { result: null, names: ['x'], cwd: '/w' },
    ]) {
      const r = parseGuestOutcome(v)
      assert.equal(r.success, true)
      assert.equal(r.success && r.data, v)
    }
  })
  test('anything else goes through the schema, which refuses what is malformed', () => {
    const bad = parseGuestOutcome({ stdout: 42 })
    assert.equal(bad.success, false)
    assert.match(JSON.stringify(!bad.success && bad.error.issues), /stdout/)
    assert.equal(
      parseGuestOutcome({ error: { phase: 'runtime' } }).success,
      false,
      'an error needs a message',
    )
    assert.equal(parseGuestOutcome([]).success, false)
    assert.equal(parseGuestOutcome(null).success, false)
    const err = parseGuestOutcome({ error: { phase: 'runtime', message: 'boom' }, stdout: 'x' })
    assert.equal(err.success, true)
    // Keys the guest's contract does not name are dropped, host-owned ones (timedOut,
    // survived) included: a forged frame cannot set them.
    const extra = parseGuestOutcome({ stdout: 'a', other: 1, timedOut: true, survived: {} })
    assert.deepEqual(extra.success && extra.data, { stdout: 'a' })
  })
})
