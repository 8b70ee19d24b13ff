// Tools: deferred calls, where they settle, data crossing, failures, gather, shadowing, docs.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { type Guest, startGuest } from './harness.js'

let g: Guest
let inflight = 0
let peak = 0
const calls = (name: string) => g.hostCalls.filter((c) => c.name === name)

before(async () => {
  g = await startGuest({
    tools: {
      grep: {
        fn: (q: string) => ({ query: q, hits: [`${q}-1`, `${q}-2`] }),
        doc: 'Search files for a pattern.',
        signature: '(pattern, path=".", n=None)',
      },
      note: { fn: (...args: unknown[]) => ({ args }), doc: 'Records its arguments.' },
      slow: {
        fn: async (q: string) => {
          inflight++
          peak = Math.max(peak, inflight)
          await sleep(60)
          inflight--
          return q
        },
      },
      fail: {
        fn: (m: string) => {
          throw new Error(`bad ${m}`)
        },
      },
      patch: { fn: () => 'patched', doc: 'Apply a patch.' },
      hang: {
        fn: async () => {
          await sleep(1500)
          return 'late'
        },
      },
    },
  })
})
after(async () => {
  await g.close()
})

describe('where a deferred call settles', () => {
  test('a call written as a statement runs, at any depth', async () => {
    const before = calls('note').length
    const out = await g.runBlock(
      [
        'note("top")',
        'if True:',
        '    note("if")',
        'for i in range(2):',
        '    note("for", i)',
        'while True:',
        '    note("while"); break',
        'with __import__("io").StringIO() as fh:',
        '    note("with")',
        'try:',
        '    note("try")',
        'finally:',
        '    pass',
        'match 1:',
        '    case 1: note("match")',
        'def helper():',
        '    note("def")',
        'helper()',
        'class C:',
        '    note("class")',
      ].join('\n'),
    )
    assert.equal(out.error, undefined, JSON.stringify(out.error))
    const seen = calls('note')
      .slice(before)
      .map((c) => c.args[0])
    assert.deepEqual(seen, ['top', 'if', 'for', 'for', 'while', 'with', 'try', 'match', 'def', 'class'])
  })
  test('the value of return settles in any function, and await anywhere', async () => {
    const out = await g.runBlock(
      'def f(q):\n    return grep(q)\nasync def af(q):\n    return grep(q)\nprint(f("a")["query"], (await af("b"))["query"], [await grep(x) for x in ["c"]][0]["query"])',
    )
    assert.equal(out.stdout, 'a b c\n')
  })
  test('touching a deferred call as data settles it', async () => {
    const out = await g.runBlock(
      'r = grep("t")\nprint(r)\nprint(grep("u")["query"], len(grep("v")), "hits" in grep("w"), grep("x").get("query"), grep("y").keys().__len__())',
    )
    assert.equal(out.stdout, "{'query': 't', 'hits': ['t-1', 't-2']}\nu 2 True x 2\n")
  })
  test('expression positions stay deferred until something settles them', async () => {
    const before = calls('grep').length
    const out = await g.runBlock('pending = [grep("e1"), grep("e2")]\nlen(pending)')
    assert.equal(out.result, 2)
    assert.equal(calls('grep').length, before, 'no call ran')
  })
  test('statements inside async def stay deferred (gather batches them)', async () => {
    const before = calls('note').length
    await g.runBlock('async def quiet():\n    note("inside")\nawait quiet()')
    assert.equal(calls('note').length, before)
  })
  test('repr of an unsettled call says it never ran', async () => {
    const out = await g.runBlock('print(repr(grep("never")))')
    assert.match(out.stdout ?? '', /NEVER AWAITED, it did not run/)
    assert.ok(!calls('grep').some((c) => c.args[0] === 'never'))
  })
  test('await of a plain value returns it; a settled call never re-runs', async () => {
    const before = calls('grep').length
    const out = await g.runBlock(
      'v = await 5\nd = grep("once")\nx1 = await d\nx2 = await d\nx3 = await x1\nprint(v, x1 is x2, x3 is x1)',
    )
    assert.equal(out.stdout, '5 True True\n')
    assert.equal(calls('grep').length, before + 1)
  })
  test('hasattr probes and underscore attributes never run a tool', async () => {
    const before = calls('grep').length
    const out = await g.runBlock(
      // A list element stays deferred (an assignment of the call itself would settle it).
      'held = [grep("probe")]\nprint(hasattr(held[0], "get"), hasattr(held[0], "_private"), getattr(held[0], "keys", "none"))\ntry:\n    held[0]._x\nexcept AttributeError:\n    print("no _x")',
    )
    assert.equal(out.stdout, 'False False none\nno _x\n')
    assert.equal(calls('grep').length, before)
  })
})

describe('arguments and results', () => {
  test('calls are positional and keyword arguments fold into one trailing dict', async () => {
    await g.runBlock('note(1, "two", [3], flag=True, n=None)')
    assert.deepEqual(calls('note').at(-1)?.args, [1, 'two', [3], { flag: true, n: null }])
  })
  test('os.PathLike values cross as strings at any depth', async () => {
    await g.runBlock('note(Path("/tmp/a"), {"p": [Path("/b/c")]}, (Path("d"),))')
    assert.deepEqual(calls('note').at(-1)?.args, ['/tmp/a', { p: ['/b/c'] }, ['d']])
  })
  test('a value that cannot cross names its position', async () => {
    const out = await g.runBlock('note({"k": {1, 2}})')
    assert.match(out.error?.message ?? '', /note: argument \[0\]\['k'\] is a set/)
  })
  test('numbers the host cannot hold exactly are refused with their position, not rounded', async () => {
    const before = calls('note').length
    await g.runBlock('note(2**53 - 1, -(2**53 - 1), 1.5)')
    assert.deepEqual(calls('note').at(-1)?.args, [2 ** 53 - 1, -(2 ** 53 - 1), 1.5])
    const big = await g.runBlock('note({"ids": [1, 2**64]})')
    assert.match(
      big.error?.message ?? '',
      /note: argument \[0\]\['ids'\]\[1\] is an integer past ±\(2\*\*53 - 1\)/,
    )
    const nan = await g.runBlock('note(1, float("nan"))')
    assert.match(nan.error?.message ?? '', /note: argument \[1\] is nan, which JSON cannot carry/)
    const inf = await g.runBlock('note(x=float("-inf"))')
    assert.match(inf.error?.message ?? '', /note: argument \[0\]\['x'\] is -inf/)
    assert.equal(calls('note').length, before + 1, 'the refused calls never reached the host')
  })
  test('results are real data; a missing key lists real keys and a near miss; .get is silent', async () => {
    const out = await g.runBlock(
      'r = await grep("k")\nprint(type(r["hits"]).__name__, isinstance(r, dict), r.get("nope"))\nr["querry"]',
    )
    assert.equal(out.stdout, 'list True None\n')
    assert.match(
      out.error?.message ?? '',
      /KeyError: 'querry' is not in this result; its keys are \['query', 'hits'\]; did you mean 'query'\?/,
    )
  })
})

describe('tool failures', () => {
  test('a failure is an Exception carrying the host message', async () => {
    const out = await g.runBlock(
      'try:\n    fail("x")\nexcept Exception as e:\n    print(type(e).__name__, "|", e)',
    )
    assert.equal(out.stdout, 'ToolError | fail: bad x\n')
  })
  test('uncaught, the block error has phase host and names the tool', async () => {
    const out = await g.runBlock('x = 1\nawait fail("y")')
    assert.equal(out.error?.phase, 'host')
    assert.match(out.error.message, /tool fail failed: bad y/)
    assert.equal(out.error.line, 2)
  })
})

describe('gather', () => {
  test('runs host tools concurrently and returns results in order', async () => {
    peak = 0
    const out = await g.runBlock('r = await gather(*[slow(q) for q in "abc"])\nr')
    assert.deepEqual(out.result, ['a', 'b', 'c'])
    assert.equal(peak, 3)
  })
  test('async def children batch their tool calls too', async () => {
    peak = 0
    const out = await g.runBlock(
      'async def one(q):\n    x = await slow(q)\n    return slow(x + "!")\nawait gather(one("a"), one("b"), 7)',
    )
    assert.deepEqual(out.result, ['a!', 'b!', 7])
    assert.equal(peak, 2)
  })
  test('sequential statements run one at a time', async () => {
    peak = 0
    await g.runBlock('slow("a")\nslow("b")')
    assert.equal(peak, 1)
  })
  test('every child runs to completion and failures aggregate', async () => {
    const before = calls('slow').length
    const out = await g.runBlock('await gather(fail("1"), slow("ok"), fail("2"))')
    assert.equal(calls('slow').length, before + 1)
    assert.equal(out.error?.phase, 'host')
    assert.match(out.error.message, /gather: 2\/3 awaitables failed — \[0\] fail: bad 1; \[2\] fail: bad 2/)
  })
  test('return_exceptions=True returns the failures in place', async () => {
    const out = await g.runBlock(
      'r = await gather(fail("1"), slow("ok"), return_exceptions=True)\nprint(type(r[0]).__name__, r[1])',
    )
    assert.equal(out.stdout, 'ToolError ok\n')
  })
  test('asyncio.run(main()) works inside a block, with tools and gather', async () => {
    const out = await g.runBlock(
      'import asyncio\nasync def main():\n    a = await slow("x")\n    b = await gather(slow("y"), slow("z"))\n    await asyncio.sleep(0.001)\n    return [a, b]\nprint(asyncio.run(main()))',
    )
    assert.equal(out.stdout, "['x', ['y', 'z']]\n")
  })
})

describe('asyncio at block level', () => {
  test('asyncio.gather at top level batches like gather', async () => {
    peak = 0
    const out = await g.runBlock('import asyncio\nawait asyncio.gather(slow("p"), slow("q"))')
    assert.deepEqual(out.result, ['p', 'q'])
    assert.equal(peak, 2)
  })
  test('await asyncio.sleep(delay) works at top level', async () => {
    const out = await g.runBlock(
      'import asyncio\nt = time.monotonic()\nawait asyncio.sleep(0.05)\ntime.monotonic() - t >= 0.05',
    )
    assert.equal(out.result, true)
  })
  test('awaiting an asyncio future with no loop fails loudly instead of hanging', async () => {
    const out = await g.runBlock('import asyncio\nfut = asyncio.new_event_loop().create_future()\nawait fut')
    assert.equal(out.error?.line, 3)
    assert.match(out.error?.message ?? '', /without an event loop: use gather\(\)/)
  })
  test('an interrupt during a tool call leaves the next block its own results', async () => {
    const before = calls('hang').length
    const run = g.runBlock('print("waiting", flush=True)\nawait hang()')
    while (calls('hang').length === before) await sleep(10)
    g.interrupt()
    const out = await run
    assert.equal(out.error?.phase, 'interrupted')
    assert.equal(out.stdout, 'waiting\n')
    const next = await g.runBlock('[await grep("after"), await slow("s")]')
    assert.deepEqual(next.result, [{ query: 'after', hits: ['after-1', 'after-2'] }, 's'])
  })
})

describe('shadowing, refusals and removal', () => {
  test('assigning a tool name shadows it for that block only', async () => {
    const out = await g.runBlock('patch = "x"\nprint(patch)')
    assert.equal(out.stdout, 'x\n')
    assert.equal((await g.runBlock('await patch()')).result, 'patched')
    await g.runBlock('for patch in [1, 2]: pass')
    assert.equal((await g.runBlock('await patch()')).result, 'patched')
  })
  test('a top-level def or class named after a tool is refused with a fix', async () => {
    for (const code of ['def patch(x):\n    return x', 'if True:\n    class grep: pass']) {
      const out = await g.runBlock(code)
      assert.equal(out.error?.flags?.includes('tool-name'), true)
      assert.match(out.error.message, /_mine/)
    }
    assert.equal((await g.runBlock('await patch()')).result, 'patched')
  })
  test('from m import * never overwrites a tool', async () => {
    const out = await g.runBlock(
      'import sys, types\nm = types.ModuleType("star_mod")\nm.grep = "shadow"\nsys.modules["star_mod"] = m\nfrom star_mod import *\nprint(type(grep).__name__)',
    )
    assert.equal(out.stdout, 'Tool\n')
  })
  test('calling a removed tool is a NameError that points at apropos', async () => {
    await g.bind('gone', () => 1)
    await g.remove('gone')
    const out = await g.runBlock('gone()')
    assert.match(out.error?.message ?? '', /^NameError: .*gone.*removed.*apropos\('gone'\)/)
  })
})

describe('introspection', () => {
  test('a tool carries __name__, the host doc and its declared signature', async () => {
    const out = await g.runBlock(
      'import inspect\nsig = inspect.signature(grep)\nprint(grep.__name__, "|", grep.__doc__, "|", sig, "|", sig.parameters["path"].default)',
    )
    assert.equal(out.stdout, "grep | Search files for a pattern. | (pattern, path='.', n=None) | .\n")
  })
  test('doc() answers for tools', async () => {
    const out = await g.runBlock('doc("grep")')
    assert.match(String(out.result), /^grep\(pattern, path=".", n=None\)[\s\S]*Search files for a pattern\./)
  })
  test('apropos ranks tools, docs and the session helpers; empty lists everything', async () => {
    await g.runBlock('def find_patterns(text):\n    "Find every pattern in a text."\n    return 1')
    const ranked = String((await g.runBlock('apropos("pattern")')).result).split('\n')
    assert.match(ranked[0] ?? '', /^find_patterns|^grep/)
    assert.ok(ranked.some((l) => l.startsWith('find_patterns(text)')))
    assert.ok(ranked.some((l) => l.startsWith('grep(')))
    assert.ok(!ranked.some((l) => l.startsWith('slow')))
    const all = String((await g.runBlock('apropos("")')).result)
    for (const n of [
      'grep',
      'note',
      'slow',
      'fail',
      'patch',
      'find_patterns',
      'doc',
      'defs',
      'gather',
      'network_probe',
    ]) {
      assert.match(all, new RegExp(`^${n}`, 'm'))
    }
  })
  test('defs() lists the session functions; defs(name) shows the source', async () => {
    await g.runBlock('def area(w, h=2):\n    """Area of a rectangle.\n\n    Long part."""\n    return w * h')
    const listed = String((await g.runBlock('defs()')).result)
    assert.match(listed, /^area\(w, h=2\)\s+Area of a rectangle\.$/m)
    assert.doesNotMatch(listed, /Long part/)
    const src = String((await g.runBlock('defs("area")')).result)
    assert.match(src, /^def area\(w, h=2\):[\s\S]*return w \* h$/)
  })
})

describe('host bindings', () => {
  test('a namespace method is a tool under its namespace, with doc and signature', async () => {
    await g.setBinding('vcs.status', (short: boolean) => ({ short }), 'Working tree status.', '(short=False)')
    await g.setBinding('vcs.log', (n: number) => [n], 'Recent commits.', '(n=10)')
    const out = await g.runBlock(
      'import inspect\nprint((await vcs.status(True))["short"], vcs.log(3), inspect.signature(vcs.log), vcs.status.__doc__)',
    )
    assert.equal(out.stdout, 'True [3] (n=10) Working tree status.\n')
    assert.deepEqual(
      g.hostCalls.slice(-2).map((c) => [c.name, c.args]),
      [
        ['vcs.status', [true]],
        ['vcs.log', [3]],
      ],
    )
  })
  test('data bindings cross as JSON and are not the model variables', async () => {
    await g.setBinding('LIMITS', { max: 3, names: ['a'] })
    const out = await g.runBlock('LIMITS["max"], LIMITS["names"]')
    assert.deepEqual(out.result, [3, ['a']])
    assert.ok(!(await g.call<string[]>('live_vars')).includes('LIMITS'))
  })
})
