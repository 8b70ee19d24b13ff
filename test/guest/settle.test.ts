// Where a deferred tool call settles (issue 13's rule table), through real sessions: a real
// runtime, a jailed worker with CPython, tools bound on the host that count their own calls.
// Each test is one row of the table; the tool's host-side call log proves each ran once.
// It lives in test/guest so it runs against every staged Python minor (scripts/test.mjs).
import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import type { Session } from '../../src/sessions/session.js'
import { python, tempHome } from '../sessions/helpers.js'

const { home, root } = tempHome('settle')
let rt: Runtime
let s: Session
// Every call the tools received, in order, as "name:arg".
let log: string[] = []
let active = 0
let peak = 0

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

before(async () => {
  rt = await createRuntime({ home, python, pool: { size: 0 }, defaultTools: false })
  s = await rt.createSession({ roots: [root] })
  // The session appends its tool context to the arguments: the tools take what they need.
  await s.bind(
    'read',
    (path: string) => {
      log.push(`read:${path}`)
      return { path, text: `text of ${path}`, lines: [1, 2] }
    },
    { signature: '(path)' },
  )
  await s.bind(
    'size',
    (path: string) => {
      log.push(`size:${path}`)
      return path.length
    },
    { signature: '(path)' },
  )
  await s.bind(
    'name',
    (x: string) => {
      log.push(`name:${x}`)
      return `n-${x}`
    },
    { signature: '(x)' },
  )
  await s.bind(
    'fail',
    (where: string) => {
      log.push(`fail:${where}`)
      throw new Error(`boom in ${where}`)
    },
    { signature: '(where)' },
  )
  await s.bind(
    'slow',
    async (q: string) => {
      log.push(`slow:${q}`)
      active++
      peak = Math.max(peak, active)
      await sleep(80)
      active--
      return q.toUpperCase()
    },
    { signature: '(q)' },
  )
})
after(async () => {
  await s.dispose()
  await rt.close()
})
beforeEach(() => {
  log = []
  peak = 0
})

// Runs a block that must succeed; returns its stdout lines.
async function lines(code: string): Promise<string[]> {
  const r = await s.runBlock(code, { timeoutMs: 120_000 })
  assert.equal(r.error, undefined, `block failed: ${JSON.stringify(r.error)}`)
  return (r.stdout ?? '').trimEnd().split('\n')
}

describe('settling: the rule table', () => {
  test('module level: x = tool(), x: T = tool(), bare tool(), +=, unpacking settle to real data', async () => {
    const out = await lines(
      [
        'import json',
        'r = read("a.py")',
        'ann: dict = read("b.py")',
        'read("c.py")',
        'total = 10',
        'total += size("dddd")',
        'p, q = read("e.py"), name("f")',
        'held = [read("g.py")]',
        'first = held[0]',
        'either = read("h.py") or {}',
        'print(isinstance(r, dict), isinstance(ann, dict), isinstance(p, dict), type(q).__name__)',
        'print(json.dumps(r))',
        'print(total, r["text"], len(r["lines"]), q)',
        'print(json.dumps([first["path"], either["path"]]), isinstance(first, dict), isinstance(either, dict))',
      ].join('\n'),
    )
    assert.deepEqual(out, [
      'True True True str',
      '{"path": "a.py", "text": "text of a.py", "lines": [1, 2]}',
      '14 text of a.py 2 n-f',
      '["g.py", "h.py"] True True',
    ])
    assert.deepEqual(log, [
      'read:a.py',
      'read:b.py',
      'read:c.py',
      'size:dddd',
      'read:e.py',
      'name:f',
      'read:g.py',
      'read:h.py',
    ])
  })

  test('module level with a top-level await: statements still settle where they stand', async () => {
    const out = await lines(
      [
        'first = read("one")',
        'both = await gather(read("two"), read("three"))',
        'print(isinstance(first, dict), [b["path"] for b in both])',
      ].join('\n'),
    )
    assert.deepEqual(out, ["True ['two', 'three']"])
    assert.equal(log[0], 'read:one', 'the assignment ran before the gather')
    assert.deepEqual(log.slice(1).sort(), ['read:three', 'read:two'])
  })

  test('nested statements: if/for/while/with/try/match, plain def and class bodies settle in place', async () => {
    const out = await lines(
      [
        'import io, json',
        'seen = []',
        'if True:',
        '    x = read("if")',
        '    seen.append(type(x).__name__)',
        'for i in range(2):',
        '    x = read(f"for{i}")',
        '    seen.append(type(x).__name__)',
        'while True:',
        '    x: dict = read("while")',
        '    seen.append(type(x).__name__)',
        '    break',
        'with io.StringIO() as fh:',
        '    x = read("with")',
        '    seen.append(type(x).__name__)',
        'try:',
        '    x = read("try")',
        '    seen.append(type(x).__name__)',
        'finally:',
        '    n = 0',
        '    n += size("finally")',
        '    seen.append(n)',
        'match 1:',
        '    case 1:',
        '        a, b = read("match"), name("m")',
        '        seen.append(type(a).__name__ + "/" + b)',
        'def plain():',
        '    y = read("def")',
        '    return json.dumps(y)',
        'seen.append(plain())',
        'class Config:',
        '    data = read("class")',
        'seen.append(type(Config.data).__name__)',
        'print(json.dumps(seen))',
      ].join('\n'),
    )
    assert.deepEqual(JSON.parse(out[0]!), [
      'ResultDict',
      'ResultDict',
      'ResultDict',
      'ResultDict',
      'ResultDict',
      'ResultDict',
      7,
      'ResultDict/n-m',
      '{"path": "def", "text": "text of def", "lines": [1, 2]}',
      'ResultDict',
    ])
    assert.deepEqual(log, [
      'read:if',
      'read:for0',
      'read:for1',
      'read:while',
      'read:with',
      'read:try',
      'size:finally',
      'read:match',
      'name:m',
      'read:def',
      'read:class',
    ])
  })

  test('a tool that raises is catchable in each position, with its message', async () => {
    const out = await lines(
      [
        'import io',
        'caught = []',
        'def note(e):',
        '    caught.append(f"{type(e).__name__}: {e}")',
        'try:',
        '    x = fail("module")',
        'except Exception as e:',
        '    note(e)',
        'if True:',
        '    try:',
        '        x = fail("if")',
        '    except Exception as e:',
        '        note(e)',
        'for i in range(1):',
        '    try:',
        '        fail("for")',
        '    except Exception as e:',
        '        note(e)',
        'while True:',
        '    try:',
        '        x: dict = fail("while")',
        '    except Exception as e:',
        '        note(e)',
        '    break',
        'with io.StringIO():',
        '    try:',
        '        a, b = fail("with"), 1',
        '    except Exception as e:',
        '        note(e)',
        'match 1:',
        '    case 1:',
        '        try:',
        '            n = 0',
        '            n += fail("match")',
        '        except Exception as e:',
        '            note(e)',
        'def plain():',
        '    try:',
        '        y = fail("def")',
        '    except Exception as e:',
        '        note(e)',
        'plain()',
        'def returns():',
        '    return {"k": [fail("return")]}',
        'try:',
        '    returns()',
        'except Exception as e:',
        '    note(e)',
        'async def later():',
        '    t = fail("async")',
        '    try:',
        '        await t',
        '    except Exception as e:',
        '        note(e)',
        'await later()',
        'def promoted():',
        '    await fail("promoted")',
        'try:',
        '    promoted()',
        'except Exception as e:',
        '    note(e)',
        'try:',
        '    await gather(*[fail(w) for w in ["expr"]])',
        'except Exception as e:',
        '    note(e)',
        'print("\\n".join(caught))',
      ].join('\n'),
    )
    const where = ['module', 'if', 'for', 'while', 'with', 'match', 'def', 'return', 'async', 'promoted']
    assert.deepEqual(
      out.slice(0, where.length),
      where.map((w) => `ToolError: fail: boom in ${w}`),
    )
    assert.match(
      out[where.length]!,
      /^GatherError: gather: 1\/1 awaitables failed — \[0\] fail: boom in expr$/,
    )
    assert.deepEqual(
      log,
      [...where, 'expr'].map((w) => `fail:${w}`),
      'each failing tool ran exactly once',
    )
  })

  test('statements inside async def stay deferred, so gather batches them', async () => {
    const out = await lines(
      [
        'async def both():',
        '    t = slow("a")',
        '    u = slow("b")',
        '    kinds = [type(t).__name__, type(u).__name__]',
        '    got = await gather(t, u)',
        '    return kinds, got',
        'print(await both())',
      ].join('\n'),
    )
    assert.deepEqual(out, ["(['DeferredCall', 'DeferredCall'], ['A', 'B'])"])
    assert.equal(peak, 2, 'both calls were in flight at once')
    assert.deepEqual(log.sort(), ['slow:a', 'slow:b'])
  })

  test('return settles calls one or two container levels deep, in sync and async functions', async () => {
    const out = await lines(
      [
        'import json',
        'def shaped():',
        '    return {"one": read("d1"), "list": [read("l1"), read("l2")], "tuple": (name("t1"),)}',
        'def flat():',
        '    return read("flat")',
        'def names():',
        '    return {name("s1"), name("s2")}',
        'def deeper():',
        '    return {"a": [[read("three-levels")]]}',
        'async def many(qs):',
        '    return [slow(q) for q in qs]',
        'v = shaped()',
        'print(json.dumps(v))',
        'print(type(v["list"][1]).__name__, type(v["tuple"]).__name__, flat()["path"], sorted(names()))',
        'print(type(deeper()["a"][0][0]).__name__)',
        'print(await many(["x", "y", "z"]))',
      ].join('\n'),
    )
    assert.deepEqual(JSON.parse(out[0]!), {
      one: { path: 'd1', text: 'text of d1', lines: [1, 2] },
      list: [
        { path: 'l1', text: 'text of l1', lines: [1, 2] },
        { path: 'l2', text: 'text of l2', lines: [1, 2] },
      ],
      tuple: ['n-t1'],
    })
    assert.equal(out[1], "ResultDict tuple flat ['n-s1', 'n-s2']")
    assert.equal(out[2], 'DeferredCall', 'three levels down stays deferred')
    assert.equal(out[3], "['X', 'Y', 'Z']")
    assert.equal(peak, 3, 'the calls of a returned list run together')
    assert.ok(!log.includes('read:three-levels'), 'the third level never ran')
    for (const c of ['read:d1', 'read:l1', 'read:l2', 'name:t1', 'read:flat', 'name:s1', 'name:s2']) {
      assert.equal(log.filter((l) => l === c).length, 1, `${c} ran once`)
    }
  })

  test('return settles at most 1024 items; the rest stay deferred', async () => {
    const out = await lines(
      [
        'def lots():',
        '    return [size("x" * (i % 7)) for i in range(1030)]',
        'got = lots()',
        'print(sum(isinstance(g, int) for g in got), type(got[-1]).__name__, got[-1] + 1)',
      ].join('\n'),
    )
    // The 1030th call runs when the sum touches it, not before.
    assert.deepEqual(out, ['1024 DeferredCall 1'])
    assert.equal(log.length, 1025)
  })

  test('expression positions stay deferred: arguments, list elements, comprehensions; gather batches', async () => {
    const out = await lines(
      [
        'def kind(v):',
        '    return type(v).__name__',
        'held = [read("elem")]',
        'comp = [read(q) for q in ["c1", "c2"]]',
        'print(kind(read("arg")), kind(held[0]), kind(comp[1]))',
        'res = await gather(*[slow(q) for q in "abcd"])',
        'print(res)',
      ].join('\n'),
    )
    assert.deepEqual(out, ['DeferredCall DeferredCall DeferredCall', "['A', 'B', 'C', 'D']"])
    assert.equal(peak, 4, 'the module-level gather ran all four at once')
    assert.deepEqual(log.sort(), ['slow:a', 'slow:b', 'slow:c', 'slow:d'])
  })

  test('await of a settled value or a plain value returns it and never re-runs a tool', async () => {
    const out = await lines(
      [
        'r = read("once")',
        'a = await r',
        'b = await r',
        'c = await 5',
        'async def again():',
        '    return await r',
        'd = await again()',
        'print(a is r, b is r, c, d is r)',
      ].join('\n'),
    )
    assert.deepEqual(out, ['True True 5 True'])
    assert.deepEqual(log, ['read:once'])
  })

  test('a plain def that awaits is promoted to async def: its statements batch, a call runs it', async () => {
    const out = await lines(
      [
        'def fetch(qs):',
        '    tasks = [slow(q) for q in qs]',
        '    extra = slow("e")',
        '    kinds = type(extra).__name__',
        '    got = await gather(*tasks, extra)',
        '    return kinds, got',
        'r = fetch(["a", "b"])',
        'print(r)',
        'print(await fetch(["c"]))',
        'fetch(["d"])',
        'print(fetch(["f"])[1])',
        'import asyncio',
        'print(asyncio.run(fetch(["g"]))[1])',
      ].join('\n'),
    )
    assert.deepEqual(out, [
      "('DeferredCall', ['A', 'B', 'E'])",
      "('DeferredCall', ['C', 'E'])",
      "['F', 'E']",
      "['G', 'E']",
    ])
    assert.equal(peak, 3, 'the promoted body batched its calls')
    assert.deepEqual(log.filter((l) => l === 'slow:e').length, 5, 'five calls of fetch, one "e" each')
    assert.deepEqual(log.filter((l) => l !== 'slow:e').sort(), [
      'slow:a',
      'slow:b',
      'slow:c',
      'slow:d',
      'slow:f',
      'slow:g',
    ])
    // Calls of a promoted def in expression position stay deferred and batch under gather.
    peak = 0
    const both = await lines(
      'def one(q):\n    return await slow(q)\npending = [one("h"), one("i")]\nprint(type(pending[0]).__name__, await gather(*pending))',
    )
    assert.deepEqual(both, ["DeferredRun ['H', 'I']"])
    assert.equal(peak, 2)
  })

  test('a promoted def is promoted again when the session restores its definitions', async () => {
    const first = await s.runBlock(
      'def twice(q):\n    r = await name(q)\n    return r * 2\nprint(twice("a"))',
    )
    assert.equal(first.stdout, 'n-an-a\n', JSON.stringify(first))
    const items = (s.lastSnapshot as { items: Array<{ name: string }> }).items.map((i) => i.name)
    assert.ok(items.includes('twice'), JSON.stringify(items))
    const restored = (await s.callGuest('restore_defs', s.lastSnapshot)) as { restored: string[] }
    assert.ok(restored.restored.includes('twice'), JSON.stringify(restored))
    assert.deepEqual(await lines('print(twice("b"))'), ['n-bn-b'])
    // (Restoring also re-runs the class bodies of earlier tests: only `twice`'s calls count here.)
    assert.deepEqual(
      log.filter((l) => l.startsWith('name:')),
      ['name:a', 'name:b'],
    )
  })
})
