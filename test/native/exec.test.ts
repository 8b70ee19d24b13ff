// exec/eval/compile/call outcomes, namespaces, output streaming and host calls,
// against the real embedded CPython (one interpreter for this file's process).
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { loadPython, type PythonRuntime } from '../../src/native/index.js'
import { tempHome, until } from './helpers.js'

tempHome()
let rt: PythonRuntime
const output: { job: number; stream: string; text: string }[] = []

before(async () => {
  rt = await loadPython()
  rt.onOutput((job, stream, text) => output.push({ job, stream, text }))
})

function printed(job: number, stream = 'stdout'): string {
  return output
    .filter((o) => o.job === job && o.stream === stream)
    .map((o) => o.text)
    .join('')
}

describe('runtime', () => {
  test('reports the distribution version and a second loadPython returns the same runtime', async () => {
    assert.match(rt.version, new RegExp(`^${rt.minor.replace('.', '\\.')}\\.\\d+`))
    assert.equal(await loadPython(), rt)
    const v = await rt.eval('__import__("sys").version_info[:2]')
    assert.deepEqual(v.ok && v.value, rt.minor.split('.').map(Number))
  })

  test('a second loadPython asking for another minor is refused', async () => {
    const other = rt.minor === '3.11' ? '3.12' : '3.11'
    await assert.rejects(loadPython({ minor: other }), { code: 'native.already-loaded' })
  })

  test('the interpreter is isolated and configured as documented', async () => {
    const o = await rt.eval(
      '[__import__("sys").flags.isolated, __import__("sys").dont_write_bytecode, __import__("sys").prefix, __import__("signal").getsignal(2).__name__]',
    )
    assert.ok(o.ok)
    assert.deepEqual(o.value, [1, true, rt.distribution.root, '_sigint'])
  })

  test('stdlib extension modules with their own libraries import (DEEPBIND, RTLD_GLOBAL)', async () => {
    const o = await rt.exec(
      'import _json, _socket, zlib, _hashlib, ssl\nh = _hashlib.new("sha256", b"x").hexdigest()',
    )
    assert.ok(o.ok, JSON.stringify(o))
    const h = await rt.eval('h')
    assert.equal(h.ok && h.value, '2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881')
  })
})

describe('exec / eval / compile', () => {
  test('exec keeps state in the namespace; eval returns JSON values', async () => {
    const a = await rt.exec('x = 40\ny = {"a": [1, 2.5, None, True]}')
    assert.deepEqual(a, { job: a.job, ok: true })
    assert.deepEqual(await rt.eval('x + 2'), { job: (await rt.eval('0')).job - 1, ok: true, value: 42 })
    const y = await rt.eval('y')
    assert.deepEqual(y.ok && y.value, { a: [1, 2.5, null, true] })
  })

  test('eval of a value JSON cannot carry returns its repr', async () => {
    const o = await rt.eval('{1, 2}')
    assert.ok(o.ok)
    assert.equal(o.value, '{1, 2}')
    assert.equal(o.repr, true)
    const nan = await rt.eval('float("nan")')
    assert.ok(nan.ok && nan.repr && nan.value === 'nan')
  })

  test('namespaces are separate dicts, and _vis.namespace() hands the same dict to Python', async () => {
    await rt.exec('z = "block-ns"', { ns: 'session-a' })
    const inA = await rt.eval('z', { ns: 'session-a' })
    assert.equal(inA.ok && inA.value, 'block-ns')
    const inMain = await rt.eval('"z" in globals()')
    assert.equal(inMain.ok && inMain.value, false)
    const viaVis = await rt.eval('__import__("_vis").namespace("session-a")["z"]')
    assert.equal(viaVis.ok && viaVis.value, 'block-ns')
  })

  test('a runtime error carries type, message, frames and the guest line/column', async () => {
    const o = await rt.exec(
      'def inner(v):\n    return v / 0\n\ndef outer():\n    return inner(1)\n\nouter()\n',
      {
        filename: '<cell-3>',
      },
    )
    assert.equal(o.ok, false)
    if (o.ok) return
    assert.equal(o.error.type, 'ZeroDivisionError')
    assert.equal(o.error.message, 'division by zero')
    assert.deepEqual(
      o.error.traceback.map((f) => [f.file, f.line, f.name]),
      [
        ['<cell-3>', 7, '<module>'],
        ['<cell-3>', 5, 'outer'],
        ['<cell-3>', 2, 'inner'],
      ],
    )
    assert.equal(o.error.line, 2)
    assert.equal(o.error.column, 12)
    assert.equal(o.error.filename, '<cell-3>')
    assert.match(
      o.error.formatted ?? '',
      /Traceback \(most recent call last\):[\s\S]*ZeroDivisionError: division by zero/,
    )
  })

  test('an exception raised in a stdlib frame keeps the guest line of the block', async () => {
    const o = await rt.exec('import json\n\njson.loads("{bad")\n')
    assert.ok(!o.ok)
    if (o.ok) return
    assert.equal(o.error.type, 'json.decoder.JSONDecodeError')
    assert.equal(o.error.line, 3)
    assert.ok(o.error.traceback.length > 1)
    assert.ok(o.error.traceback.at(-1)!.file.endsWith('decoder.py'))
  })

  test('a user-defined exception class is named like python prints it', async () => {
    const o = await rt.exec('class Oops(Exception):\n    pass\nraise Oops("bad thing")')
    assert.ok(!o.ok && o.error.type === 'Oops' && o.error.message === 'bad thing')
  })

  test('compile reports a SyntaxError with line and column and does not run the code', async () => {
    const bad = await rt.compile('a = 1\nb = (2 +\n', { filename: '<c>' })
    assert.ok(!bad.ok)
    if (bad.ok) return
    assert.equal(bad.error.type, 'SyntaxError')
    assert.equal(bad.error.line, 2)
    assert.equal(bad.error.column, 5)
    assert.equal(bad.error.filename, '<c>')
    const good = await rt.compile('never_ran = 1')
    assert.ok(good.ok)
    const ran = await rt.eval('"never_ran" in globals()')
    assert.equal(ran.ok && ran.value, false)
  })

  test('exec of a syntax error reports its position', async () => {
    const o = await rt.exec('for x in range(3)\n    pass')
    assert.ok(!o.ok && o.error.type === 'SyntaxError' && o.error.line === 1 && o.error.column === 18)
  })

  test('call imports a module and returns the JSON of the result', async () => {
    assert.equal(await rt.call('os.path', 'join', '["a", "b", "c"]'), '"a/b/c"')
    assert.equal(JSON.parse(await rt.call('json', 'loads', JSON.stringify(['{"k": [1]}']))).k[0], 1)
    await assert.rejects(rt.call('math', 'sqrt', '[-1]'), (err: any) => {
      assert.equal(err.code, 'python.exception')
      assert.equal(err.context.error.type, 'ValueError')
      return true
    })
    const notList = await rt.callOutcome('math', 'sqrt', '{"x": 1}')
    assert.ok(!notList.ok && notList.error.type === 'TypeError')
  })

  test('job ids are exposed on the promise before it settles', async () => {
    const p = rt.exec('pass')
    assert.ok(p.job > 0)
    assert.equal((await p).job, p.job)
  })
})

describe('output', () => {
  test('many small writes across both streams arrive in order, tagged with their job', async () => {
    const p = rt.exec(
      'import sys\nfor i in range(500):\n    print(i)\n    if i % 100 == 0:\n        print("e", i, file=sys.stderr)\n',
    )
    await p
    assert.equal(printed(p.job), Array.from({ length: 500 }, (_, i) => `${i}\n`).join(''))
    assert.equal(printed(p.job, 'stderr'), 'e 0\ne 100\ne 200\ne 300\ne 400\n')
    const mine = output.filter((o) => o.job === p.job)
    const seq = mine.map((o) => o.text).join('')
    assert.ok(seq.indexOf('e 100') > seq.indexOf('99\n') && seq.indexOf('e 100') < seq.indexOf('101\n'))
  })

  test('one large write arrives whole and in order', async () => {
    const p = rt.exec(
      'import sys\nsys.stdout.write("".join(chr(65 + i % 26) for i in range(300000)))\nprint("end")',
    )
    await p
    const text = printed(p.job)
    assert.equal(text.length, 300004)
    assert.ok(text.startsWith('ABCDEFGHIJKLMNOPQRSTUVWXYZAB'))
    assert.ok(text.endsWith('end\n'))
  })

  test('a partial line is delivered while the job is still running', async () => {
    let release!: (v: string) => void
    rt.onHostCall(() => new Promise((r) => (release = r)))
    const p = rt.exec(
      'import sys, _vis\nsys.stdout.write("partial, no newline")\n_vis.host_call("wait", "[]")',
    )
    await until(() => printed(p.job) === 'partial, no newline', 'the partial line')
    release(JSON.stringify({ ok: true, value: null }))
    assert.ok((await p).ok)
  })

  test('takeOutput drains what the running job printed so far', async () => {
    let release!: (v: string) => void
    let called = false
    rt.onHostCall(() => {
      called = true
      return new Promise((r) => (release = r))
    })
    const p = rt.exec(
      'import _vis, sys\nprint("one")\nprint("two", file=sys.stderr)\n_vis.host_call("w", "[]")\nprint("three")',
    )
    await until(() => called, 'the host call')
    assert.deepEqual(rt.takeOutput(p.job), { stdout: 'one\n', stderr: 'two\n' })
    assert.deepEqual(rt.takeOutput(), { stdout: '', stderr: '' })
    assert.equal(rt.takeOutput(p.job + 1000), null)
    release(JSON.stringify({ ok: true, value: 1 }))
    await p
    assert.equal(rt.takeOutput(p.job), null)
    assert.equal(printed(p.job), 'one\nthree\n')
  })

  test('sys.__stdout__ stays fd-backed and the captured stream refuses fileno()', async () => {
    const o = await rt.eval(
      '[__import__("sys").__stdout__.fileno(), type(__import__("sys").stdout).__name__, __import__("sys").stdout.isatty()]',
    )
    assert.deepEqual(o.ok && o.value, [1, 'Stream', false])
    const f = await rt.exec(
      'import sys, io\ntry:\n    sys.stdout.fileno()\nexcept io.UnsupportedOperation:\n    ok = 1',
    )
    assert.ok(f.ok)
  })
})

describe('host calls', () => {
  test('host_call sends name and args and returns the reply envelope', async () => {
    const seen: [string, string][] = []
    rt.onHostCall(async (name, args) => {
      seen.push([name, args])
      return JSON.stringify({ ok: true, value: { echo: JSON.parse(args) } })
    })
    await rt.exec('import _vis, json\nr = json.loads(_vis.host_call("tools.echo", json.dumps([1, "two"])))')
    const r = await rt.eval('r')
    assert.deepEqual(r.ok && r.value, { ok: true, value: { echo: [1, 'two'] } })
    assert.deepEqual(seen, [['tools.echo', '[1, "two"]']])
  })

  test('a handler that throws becomes an error envelope', async () => {
    rt.onHostCall(async () => {
      throw new Error('tool exploded')
    })
    await rt.exec('import _vis, json\nr = json.loads(_vis.host_call("t", "[]"))')
    const r = await rt.eval('r')
    assert.deepEqual(r.ok && r.value, { ok: false, error: { code: 'host.error', message: 'tool exploded' } })
  })

  test('host_send/host_wait run calls concurrently and each gets a fresh id', async () => {
    const resolvers = new Map<string, (v: string) => void>()
    // `a` is answered only once the guest says it took b's reply (its own host call), so the
    // order the guest sees does not depend on how fast it wakes.
    rt.onHostCall((name) => {
      if (name !== 'took-first') return new Promise((r) => resolvers.set(name, r))
      resolvers.get('a')!(JSON.stringify({ ok: true, value: 'A' }))
      return Promise.resolve(JSON.stringify({ ok: true, value: null }))
    })
    const p = rt.exec(
      'import _vis\na = _vis.host_send("a", "[]")\nb = _vis.host_send("b", "[]")\nfirst = _vis.host_wait([a, b])\n_vis.host_call("took-first", "[]")\nsecond = _vis.host_wait([a] if first[0] == b else [b])\nids = [a, b]',
    )
    await until(() => resolvers.size === 2, 'both calls')
    resolvers.get('b')!(JSON.stringify({ ok: true, value: 'B' }))
    assert.ok((await p).ok)
    const r = await rt.eval('[ids, first, second]')
    assert.ok(r.ok)
    const [ids, first, second] = r.value as [number[], [number, string], [number, string]]
    assert.notEqual(ids[0], ids[1])
    assert.deepEqual(first, [ids[1], '{"ok":true,"value":"B"}'])
    assert.deepEqual(second, [ids[0], '{"ok":true,"value":"A"}'])
  })

  test('waiting on an unknown id is a ValueError; a reply for a finished job is dropped', async () => {
    const o = await rt.exec('import _vis\n_vis.host_wait([999999])')
    assert.ok(!o.ok && o.error.type === 'ValueError')
    let late!: (v: string) => void
    let signal!: AbortSignal
    rt.onHostCall((_n, _a, s) => {
      signal = s
      return new Promise((r) => (late = r))
    })
    const sent = await rt.exec('import _vis\ncid = _vis.host_send("never-waited", "[]")')
    assert.ok(sent.ok)
    await until(() => signal?.aborted === true, 'the abandoned call to be cancelled')
    late(JSON.stringify({ ok: true, value: 1 }))
    const after = await rt.eval('1 + 1')
    assert.equal(after.ok && after.value, 2)
  })
})

describe('close', () => {
  test('close() finalizes: atexit handlers run and later jobs are refused', async () => {
    await rt.exec('import atexit\natexit.register(print, "atexit ran")')
    assert.equal(await rt.close(), 0)
    assert.ok(output.some((o) => o.text === 'atexit ran\n'))
    await assert.rejects(rt.exec('1'), { code: 'native.closed' })
  })
})
