// The wire's reader token: the interpreter thread reads the socket while idle or waiting
// on a host call, the reader thread while Python runs bytecode (native/runtime/wire.cc).
// These blocks hand the token back and forth thousands of times around the handover
// delay; every reply must reach its own call and interrupts must still land.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'

const home = mkdtempSync(join(tmpdir(), 'vis-handover-home-'))
const root = mkdtempSync(join(tmpdir(), 'vis-handover-root-'))
process.env.VIS_HOME = home
process.on('exit', () => {
  for (const d of [home, root]) rmSync(d, { recursive: true, force: true })
})

describe('the wire reader token', () => {
  let rt: Runtime
  before(async () => {
    rt = await createRuntime({ home, python: process.env.VIS_PYTHON_VERSION, pool: { size: 0 } })
  })
  after(async () => {
    await rt.close()
  })

  test('host calls between bursts of bytecode of every length get their own replies', async () => {
    const s = await rt.createSession({ roots: [root] })
    try {
      await s.bind('echo', (x: number) => x * 2)
      // Bursts from 0 to ~1.5 ms straddle the 0.3 ms handover, so replies are read by
      // either thread; output interleaves with the calls on the same socket.
      const r = await s.runBlock(
        [
          'import time',
          'bad = []',
          'for i in range(600):',
          '    t = time.perf_counter() + (i % 7) * 0.00025',
          '    while time.perf_counter() < t:',
          '        pass',
          '    if i % 50 == 0:',
          '        print(i)',
          '    v = echo(i)',
          '    if v != 2 * i:',
          '        bad.append((i, v))',
          'print("bad", bad)',
        ].join('\n'),
      )
      assert.equal(r.error, undefined, JSON.stringify(r.error))
      const lines = (r.stdout ?? '').trim().split('\n')
      assert.equal(lines.at(-1), 'bad []')
      assert.deepEqual(
        lines.slice(0, -1).map(Number),
        Array.from({ length: 12 }, (_, i) => i * 50),
      )
    } finally {
      await s.dispose()
    }
  })

  test('big string results cross intact, whatever they contain', async () => {
    const s = await rt.createSession({ roots: [root] })
    try {
      // Long strings take the reply's quoting fast path when nothing needs escaping.
      const samples = [
        'x'.repeat(70_000),
        `${'a'.repeat(5000)}"quoted"\\back\nline\u0001`,
        'é€😀'.repeat(3000),
        `${'b'.repeat(5000)}\u2028\u007f`,
      ]
      for (const v of samples) assert.equal(await s.callModule('builtins', 'str', [v]), v)
      // A lone surrogate is not UTF-8: the reply still arrives, the surrogate replaced.
      assert.equal(await s.callModule('builtins', 'chr', [0xd800]), '?')
    } finally {
      await s.dispose()
    }
  })

  test('back-to-back short jobs and interrupts of long ones', async () => {
    const s = await rt.createSession({ roots: [root] })
    try {
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) => s.eval(`${i} * 3`) as Promise<{ value: number }>),
      )
      assert.deepEqual(
        results.map((x) => x.value),
        Array.from({ length: 200 }, (_, i) => i * 3),
      )
      for (const spin of ['while True: pass', 'import time\ntime.sleep(60)']) {
        const run = s.runBlock(spin)
        await new Promise((r) => setTimeout(r, 50))
        assert.equal((await s.interrupt()).landed, true, spin)
        const out = await run
        assert.match(out.error?.message ?? '', /interrupt/i)
      }
      assert.deepEqual(await s.runBlock('print("ok")'), { stdout: 'ok\n' })
    } finally {
      await s.dispose()
    }
  })
})
