// The wire's fast paths (native/runtime/wire.cc, json_text.cc): the idle interpreter
// thread's bounded spin, JSON strings scanned 16 bytes at a time on both sides, and
// the guest's lazy asyncio. Each must be invisible except in speed and memory.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import { isVisError } from '../../src/util/errors.js'
import { processTree } from '../../src/worker/proctree.js'

const home = mkdtempSync(join(tmpdir(), 'vis-fastpath-home-'))
const root = mkdtempSync(join(tmpdir(), 'vis-fastpath-root-'))
process.env.VIS_HOME = home
process.on('exit', () => {
  for (const d of [home, root]) rmSync(d, { recursive: true, force: true })
})

// CPU time (user + system, in clock ticks) of every process in a worker's tree.
function treeTicks(pid: number): number {
  let sum = 0
  for (const p of processTree(pid)) {
    try {
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ')
      sum += Number(fields[11]) + Number(fields[12])
    } catch {
      // gone
    }
  }
  return sum
}

// Strings whose special characters land at every offset of a 16-byte block, and runs
// long enough to take the native quoting path (>= 512 characters).
function trickyStrings(): string[] {
  const specials = ['"', '\\', '\n', '\t', '\u0000', '\u001f', '\b', '\f', 'é', '€', '😀', '\u2028', '\u007f']
  const out: string[] = ['', '"', '\\', 'x'.repeat(512), `${'y'.repeat(600)}\\`]
  let seed = 7
  const next = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    return seed
  }
  for (let n = 0; n < 60; n++) {
    const len = 1 + (next() % 2000)
    let s = ''
    for (let i = 0; i < len; i++)
      s += next() % 9 === 0 ? specials[next() % specials.length] : 'abcdefgh'[next() % 8]
    out.push(s)
  }
  for (let at = 0; at < 33; at++) out.push(`${'q'.repeat(at)}"${'r'.repeat(600)}\\${'s'.repeat(at)}`)
  return out
}

describe('wire fast paths', () => {
  let rt: Runtime
  before(async () => {
    rt = await createRuntime({ home, python: process.env.VIS_PYTHON_VERSION, pool: { size: 0 } })
  })
  after(async () => {
    await rt.close()
  })

  test('strings with escapes at every offset cross both ways intact', async () => {
    const s = await rt.createSession({ roots: [root] })
    try {
      for (const v of trickyStrings()) assert.equal(await s.callModule('builtins', 'str', [v]), v)
    } finally {
      await s.dispose()
    }
  })

  test("the addon's JSON quoting writes what json.dumps writes", async () => {
    const s = await rt.createSession({ roots: [root] })
    try {
      await s.exec(
        [
          'import json as _json, _vis as _v',
          'def _same(xs):',
          '    return [x for x in xs if _v.json_quote(x) != _json.dumps(x, ensure_ascii=False)]',
        ].join('\n'),
      )
      const samples = trickyStrings()
      assert.deepEqual(await s.callModule('__main__', '_same', [samples]), [])
      // A lone surrogate has no UTF-8 form: refused, never written half-encoded.
      const bad = (await s.eval('_v.json_quote(chr(0xd800))')) as { ok: boolean; error?: { type: string } }
      assert.equal(bad.ok, false)
      assert.equal(bad.error?.type, 'UnicodeEncodeError')
    } finally {
      await s.dispose()
    }
  })

  test('a worker stops spinning once requests stop coming', async () => {
    const s = await rt.createSession({ roots: [root] })
    try {
      for (let i = 0; i < 300; i++) await s.exec('x = 1')
      await new Promise((r) => setTimeout(r, 100))
      const t0 = treeTicks(s.pid)
      await new Promise((r) => setTimeout(r, 1000))
      // Clock ticks are 10 ms: a worker that kept polling would burn ~100 in this second.
      const used = treeTicks(s.pid) - t0
      assert.ok(used <= 5, `an idle worker used ${used} ticks of CPU in one second`)
    } finally {
      await s.dispose()
    }
  })

  test('spinUs 0 turns spinning off; out-of-range values are refused', async () => {
    const quiet = await createRuntime({
      home,
      python: process.env.VIS_PYTHON_VERSION,
      pool: { size: 0 },
      spinUs: 0,
    })
    try {
      const s = await quiet.createSession({ roots: [root] })
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => s.eval(`${i} + 1`)))
      assert.deepEqual(
        results.map((r) => (r as { value: number }).value),
        Array.from({ length: 50 }, (_, i) => i + 1),
      )
      await s.dispose()
    } finally {
      await quiet.close()
    }
    await assert.rejects(createRuntime({ home, spinUs: -1 }), /spinUs/)
    await assert.rejects(createRuntime({ home, spinUs: 1e9 }), /spinUs/)
    const prev = process.env.VIS_WIRE_SPIN_US
    process.env.VIS_WIRE_SPIN_US = 'soon'
    try {
      const bad = await createRuntime({ home, python: process.env.VIS_PYTHON_VERSION, pool: { size: 0 } })
      await assert.rejects(bad.createSession({ roots: [root] }), (e) => isVisError(e, 'worker.options'))
      await bad.close()
    } finally {
      if (prev === undefined) delete process.env.VIS_WIRE_SPIN_US
      else process.env.VIS_WIRE_SPIN_US = prev
    }
  })

  test("a worker is its pid namespace's init: no reaper beside it unless it may start processes", async () => {
    const s = await rt.createSession({ roots: [root] })
    const withShell = await rt.createSession({ roots: [root], shell: true })
    try {
      assert.deepEqual(await s.eval('(__import__("os").getpid(), __import__("os").getppid())'), {
        ok: true,
        value: [1, 0],
      })
      assert.equal(processTree(s.pid).length, 2, 'bubblewrap and the worker')
      // A policy that lets processes start keeps bubblewrap's reaper as init.
      const pid = (await withShell.eval('__import__("os").getpid()')) as { value: number }
      assert.notEqual(pid.value, 1)
      assert.equal(processTree(withShell.pid).length, 3, 'bubblewrap, its reaper and the worker')
    } finally {
      await Promise.all([s.dispose(), withShell.dispose()])
    }
  })

  test('asyncio is imported only when a block imports it, and then patched', async () => {
    const s = await rt.createSession({ roots: [root] })
    try {
      await s.runBlock('n = 1')
      const before = (await s.eval(
        '[m for m in ("asyncio", "subprocess", "ssl") if m in __import__("sys").modules]',
      )) as {
        value: string[]
      }
      assert.deepEqual(before.value, [])
      const r = await s.runBlock(
        [
          'import asyncio',
          'async def main():',
          '    try:',
          '        await asyncio.create_subprocess_exec("ls")',
          '    except PermissionError as e:',
          '        return "refused"',
          'print(asyncio.run(main()))',
          'print(asyncio.gather.__module__)',
        ].join('\n'),
      )
      assert.equal(r.error, undefined, JSON.stringify(r.error))
      const [refused, gatherModule] = (r.stdout ?? '').trim().split('\n')
      assert.equal(refused, 'refused')
      assert.match(gatherModule ?? '', /^vis_guest/)
    } finally {
      await s.dispose()
    }
  })
})
