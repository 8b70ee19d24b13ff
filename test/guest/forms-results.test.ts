// Forms a model writes whose outcome used to mislead (outside-in QA of block semantics):
// a block that ENDS with a comprehension or container of tool calls means the data, as
// `return` does; failures whose cause is how a block runs (calls a list still holds, no
// asyncio event loop, no stdin) carry a hint that says what to write instead. Real sessions,
// host tools that log each call, so every test also proves how often each tool ran.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { BlockResult as BlockOutcome } from '../../src/sessions/block-result.js'
import { loggedSession } from './logged-session.js'

const tools = loggedSession('forms-results', 60)

const run = (code: string) => tools.session.runBlock(code, { timeoutMs: 120_000 })
// The outcome schema leaves an error's flags and hints open: read them as the lists they are.
const flags = (r: BlockOutcome) => (r.error?.flags ?? []) as string[]
const hints = (r: BlockOutcome) => (r.error?.hints ?? []) as string[]

describe('the last expression settles the calls it holds, as return does', () => {
  test('a list comprehension of tool calls is the block result, the calls sent together', async () => {
    const r = await run('[size(q) for q in ["a", "bb", "ccc"]]')
    assert.equal(r.error, undefined, JSON.stringify(r.error))
    assert.deepEqual(r.result, [1, 2, 3])
    assert.deepEqual(tools.log, ['size:a', 'size:bb', 'size:ccc'])
    assert.equal(tools.peak, 3, 'the three calls were in flight at once')
  })

  test('a dict comprehension, a tuple and a nested list give data, each tool run once', async () => {
    const dict = await run('{k: size(k) for k in ["x", "yy"]}')
    assert.deepEqual(dict.result, { x: 1, yy: 2 })
    const tuple = await run('read("t1"), size("t22")')
    assert.deepEqual(tuple.result, [{ path: 't1', text: 'text of t1' }, 3])
    const nested = await run('{"files": [read("n1"), read("n2")], "n": size("abcd")}')
    assert.deepEqual(nested.result, {
      files: [
        { path: 'n1', text: 'text of n1' },
        { path: 'n2', text: 'text of n2' },
      ],
      n: 4,
    })
    assert.deepEqual(tools.log.sort(), [
      'read:n1',
      'read:n2',
      'read:t1',
      'size:abcd',
      'size:t22',
      'size:x',
      'size:yy',
    ])
  })

  test('a name holding deferred calls, shown last, is settled in place: later blocks see data', async () => {
    const held = await run('pending = [size(q) for q in ["p", "qq"]]\nlen(pending)')
    assert.equal(held.result, 2)
    assert.deepEqual(
      tools.log,
      [],
      'assigning the comprehension runs nothing (expression positions stay deferred)',
    )
    const shown = await run('pending')
    assert.deepEqual(shown.result, [1, 2])
    const later = await run('import json\nprint(json.dumps(pending), sorted(pending, reverse=True))')
    assert.equal(later.stdout, '[1, 2] [2, 1]\n')
    assert.deepEqual(tools.log, ['size:p', 'size:qq'], 'each ran once, when the block showed them')
  })

  test('a failing call inside the last expression is the block error, with the tool message and line', async () => {
    const r = await run('x = 1\n[read("ok"), fail("last")]')
    assert.equal(r.error?.phase, 'host')
    assert.match(r.error?.message ?? '', /tool fail failed: boom in last/)
    assert.equal(r.error?.line, 2)
    assert.deepEqual(tools.log.sort(), ['fail:last', 'read:ok'])
  })

  test('with a top-level await in the block, the last expression settles too', async () => {
    const r = await run('first = await read("aw")\n[first["path"], size("zz"), read("b")["text"]]')
    assert.deepEqual(r.result, ['aw', 2, 'text of b'])
  })

  test('printed output still wins over the last expression (its calls run all the same)', async () => {
    const r = await run('print("listing")\n[size(q) for q in ["a"]]')
    assert.equal(r.stdout, 'listing\n')
    assert.equal(r.result, undefined)
    assert.deepEqual(tools.log, ['size:a'])
  })
})

describe('a call used as data in an expression runs there', () => {
  test('json.dumps / json.dump of a call, or of a dict and list holding calls', async () => {
    const r = await run(
      [
        'import io, json',
        'one = json.dumps(read("j1"))',
        'held = json.dumps({"r": read("j2"), "sizes": [size(q) for q in ["a", "bb"]]}, sort_keys=True)',
        'fh = io.StringIO()',
        'json.dump([read("j3")], fh)',
        'print(one)',
        'print(held)',
        'print(fh.getvalue())',
      ].join('\n'),
    )
    assert.equal(r.error, undefined, JSON.stringify(r.error))
    assert.equal(
      r.stdout,
      [
        '{"path": "j1", "text": "text of j1"}',
        '{"r": {"path": "j2", "text": "text of j2"}, "sizes": [1, 2]}',
        '[{"path": "j3", "text": "text of j3"}]',
        '',
      ].join('\n'),
    )
    assert.deepEqual(tools.log.sort(), ['read:j1', 'read:j2', 'read:j3', 'size:a', 'size:bb'])
    // A value json cannot encode is still refused with json's own words.
    const bad = await run('import json\njson.dumps({"s": {1, 2}})')
    assert.match(bad.error?.message ?? '', /^TypeError: Object of type set is not JSON serializable/)
  })

  test('arithmetic, comparisons, sorting, rounding and indexing settle the call', async () => {
    const r = await run(
      [
        'items = ["x", "y", "z", "w"]',
        '[size("abc") * 2, 10 - size("ab"), size("abcd") / 2, -size("a"), size("ab") > 1,',
        ' size("abc") <= 2, round(size("abc") / 2), sorted([size(q) for q in ["ccc", "a", "bb"]]),',
        ' items[size("a")], list(range(size("ab"))), 2 ** size("abc"), size("abcde") % 3, abs(-size("ab"))]',
      ].join('\n'),
    )
    assert.equal(r.error, undefined, JSON.stringify(r.error))
    assert.deepEqual(r.result, [6, 8, 2, -1, true, false, 2, [1, 2, 3], 'y', [0, 1], 8, 2, 2])
  })

  test('print() of a list or dict holding calls prints the data (results.append in a loop)', async () => {
    const r = await run(
      [
        'results = []',
        'for q in ["a", "bb", "ccc"]:',
        '    results.append(size(q))',
        'print(results)',
        'print({k: read(k)["path"] for k in "xy"}, {"n": size("four")}, sep=" | ")',
        'print(results is not None, [r + 1 for r in results])',
      ].join('\n'),
    )
    assert.equal(r.error, undefined, JSON.stringify(r.error))
    assert.equal(r.stdout, "[1, 2, 3]\n{'x': 'x', 'y': 'y'} | {'n': 4}\nTrue [2, 3, 4]\n")
    assert.equal(tools.peak, 3, 'print sent the list calls together')
    assert.deepEqual(tools.log.sort(), ['read:x', 'read:y', 'size:a', 'size:bb', 'size:ccc', 'size:four'])
    // print is still python's print to look at.
    const looks = await run('import builtins\n(print is builtins.print, print.__name__, print.__module__)')
    assert.deepEqual(looks.result, [true, 'print', 'builtins'])
  })

  test('pprint / pformat of a call or of containers holding calls print the data', async () => {
    const r = await run(
      [
        'from pprint import pprint, pformat',
        'import pprint as pp',
        'pprint([read("p1"), size("bb")])',
        'pp.pp(read("p2"))',
        'print(pformat({"k": size("abc")}))',
      ].join('\n'),
    )
    assert.equal(r.error, undefined, JSON.stringify(r.error))
    assert.equal(
      r.stdout,
      "[{'path': 'p1', 'text': 'text of p1'}, 2]\n{'path': 'p2', 'text': 'text of p2'}\n{'k': 3}\n",
    )
    assert.deepEqual(tools.log.sort(), ['read:p1', 'read:p2', 'size:abc', 'size:bb'])
  })

  test('repr still says a call never ran, and nothing runs it', async () => {
    const r = await run('print(repr(read("never")))')
    assert.match(r.stdout ?? '', /NEVER AWAITED, it did not run/)
    assert.deepEqual(tools.log, [])
  })
})

describe('tool failures are caught by the names their errors show', () => {
  test('except ToolError and except GatherError work; a class of the same name a block defines is its own', async () => {
    const r = await run(
      [
        'try:',
        '    fail("x")',
        'except ToolError as e:',
        '    print("caught", type(e).__name__, e.tool, "|", e)',
        'try:',
        '    await gather(fail("a"), read("b"), fail("c"))',
        'except GatherError as e:',
        '    print(len(e.exceptions), [str(x) for x in e.exceptions])',
      ].join('\n'),
    )
    assert.equal(r.error, undefined, JSON.stringify(r.error))
    assert.equal(
      r.stdout,
      "caught ToolError fail | fail: boom in x\n2 ['fail: boom in a', 'fail: boom in c']\n",
    )
    await run('class ToolError(Exception):\n    pass')
    const own = await run(
      'try:\n    raise ToolError("mine")\nexcept ToolError as e:\n    print("own", e)\nToolError.__module__',
    )
    assert.equal(own.stdout, 'own mine\n')
    const after = await run('ToolError.__module__')
    assert.equal(after.result, '__main__', 'the block-defined class stays the session name')
  })
})

describe('failures caused by how a block runs carry a hint', () => {
  test('a call a list still holds that str.join or a method descriptor cannot take: the hint says to gather them', async () => {
    for (const code of ['", ".join([read("a")["path"], read("b")])', 'list(dict.keys(read("k")))']) {
      const r = await run(code)
      assert.equal(r.error?.phase, 'runtime')
      assert.match(r.error?.message ?? '', /^TypeError: .*DeferredCall/)
      assert.ok(flags(r).includes('deferred'), JSON.stringify(r.error))
      assert.match(hints(r)[0] ?? '', /has not run yet.*await gather\(\*\[tool\(x\) for x in xs\]\)/)
    }
    // The hinted form works: the same data, the calls together.
    const fixed = await run(
      'import math\nsizes = await gather(*[size(q) for q in ["ccc", "a"]])\nmath.fsum(sizes)',
    )
    assert.equal(fixed.result, 4)
  })

  test("a tool's name bound by an earlier block is the tool again: using it as that value says why", async () => {
    const r = await run('read = read("shadow")\nread["path"]')
    assert.equal(r.result, 'shadow', 'the value lasts for its own block')
    const next = await run('read["path"]')
    assert.match(
      next.error?.message ?? '',
      /^TypeError: 'Tool' object is not subscriptable\nhint: a tool is used as a value here: call it .*lasts for that block only$/,
    )
    assert.ok(flags(next).includes('tool-as-value'))
    assert.equal((await run('read("again")["path"]')).result, 'again')
  })

  test('r.text on a tool result (a dict) says to read r["text"], or lists its keys', async () => {
    const r = await run('r = read("a")\nr.text')
    assert.equal(r.error?.line, 2)
    assert.equal(
      r.error?.message,
      "AttributeError: 'ResultDict' object has no attribute 'text': a tool result is a dict, read it as ['text']",
    )
    const missing = await run('read("b").nope')
    assert.equal(
      missing.error?.message,
      "AttributeError: 'ResultDict' object has no attribute 'nope': a tool result is a dict; its keys are ['path', 'text']",
    )
    // Still a plain dict to everything that probes it.
    const probes = await run(
      'import copy\n(hasattr(r, "text"), isinstance(r, dict), copy.deepcopy(r) == r, r.get("text"))',
    )
    assert.deepEqual(probes.result, [false, true, true, 'text of a'])
  })

  test("display() (IPython's) is a NameError that says to print", async () => {
    const r = await run('x = 1\ndisplay(x)')
    assert.match(
      r.error?.message ?? '',
      /^NameError: name 'display' is not defined\nhint: display\(\) is IPython's.*print\(\)/,
    )
    assert.equal(hints(r).length, 1, 'one hint, not the apropos one as well')
  })

  test('a TypeError of the code itself gets no such hint', async () => {
    const r = await run('sorted([1, "a"])')
    assert.match(r.error?.message ?? '', /^TypeError: '<' not supported/)
    assert.equal(r.error?.hints, undefined)
  })

  test('asyncio.create_task at block level: no running loop, and the hint names what works', async () => {
    const r = await run('import asyncio\nasync def tick():\n    return 1\nt = asyncio.create_task(tick())')
    assert.equal(r.error?.phase, 'runtime')
    assert.match(r.error?.message ?? '', /^RuntimeError: no running event loop/)
    assert.equal(r.error?.line, 4)
    assert.ok(flags(r).includes('no-event-loop'))
    assert.match(hints(r)[0] ?? '', /without an asyncio event loop.*asyncio\.run\(main\(\)\)/)
    // What the hint says works: a top-level await, and asyncio.run of a coroutine.
    const ok = await run(
      'import asyncio\nasync def tick():\n    return 1\n(await tick(), asyncio.run(tick()))',
    )
    assert.deepEqual(ok.result, [1, 1])
  })
})
