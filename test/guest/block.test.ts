// Running one block: parsing, module-scope semantics of the whole-block coroutine, outcomes.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type Guest, startGuest } from './harness.js'

let g: Guest
before(async () => {
  g = await startGuest({
    tools: { echo: { fn: (x: unknown) => x, doc: 'returns its argument', signature: '(x)' } },
  })
})
after(async () => {
  await g.close()
})

describe('empty blocks and parse failures', () => {
  for (const code of ['', '   \n\n', '# just a comment\n  # another', 'from asyncio import gather']) {
    test(`refuses ${JSON.stringify(code)} as empty-block`, async () => {
      const out = await g.runBlock(code)
      assert.equal(out.error?.phase, 'empty-block')
      assert.match(out.error.message, /nothing to execute/)
      assert.match(out.error.message, /print\(\)/)
    })
  }
  test('a parse failure is a syntax error, never "empty"', async () => {
    const out = await g.runBlock('# comment\nx = (1,\n')
    assert.equal(out.error?.phase, 'syntax')
    assert.doesNotMatch(out.error.message, /nothing to execute/)
  })
})

describe('module-scope bindings persist across blocks', () => {
  test('every kind of module-level binding lands in the session globals', async () => {
    const code = [
      'import asyncio',
      'a = 1',
      'b = 2; b += 3',
      'c: int = 4',
      'tmp = 9',
      'del tmp',
      'def f(): return "f"',
      'class K: pass',
      'import json as jj',
      'from os import path as pth',
      'for loopv in range(3): pass',
      'with __import__("io").StringIO() as wf: pass',
      'try:',
      '    raise ValueError("x")',
      'except ValueError as exc_caught:',
      '    saved = str(exc_caught)',
      'match {"k": 7}:',
      '    case {"k": matched}: pass',
      'if True:',
      '    in_if = 1',
      'while True:',
      '    in_while = 2',
      '    break',
      'try:',
      '    in_try = 3',
      'finally:',
      '    in_finally = 4',
      '(walrus := 5)',
      'await asyncio.sleep(0)',
      'async_val = await echo("aw")',
    ].join('\n')
    const first = await g.runBlock(code)
    assert.equal(first.error, undefined, JSON.stringify(first.error))
    const out = await g.runBlock(
      'print(a, b, c, f(), K.__name__, jj.__name__, pth.__name__, loopv, wf.closed, saved, matched, in_if, in_while, in_try, in_finally, walrus, async_val, "tmp" in globals())',
    )
    assert.equal(out.stdout, '1 5 4 f K json posixpath 2 True x 7 1 2 3 4 5 aw False\n')
  })
  test('a top-level await block still binds its names as globals, not locals', async () => {
    await g.runBlock('x_aw = await echo(41)\nx_aw += 1')
    const out = await g.runBlock('x_aw')
    assert.equal(out.result, 42)
  })
  test('from __future__ imports and annotations behave as at module level', async () => {
    const out = await g.runBlock(
      'from __future__ import annotations\nann_v: SomethingUndefined = 3\ndef h(p: AlsoUndefined) -> int: return p\nprint(__annotations__["ann_v"], h.__annotations__["p"], ann_v)',
    )
    assert.equal(out.stdout, 'SomethingUndefined AlsoUndefined 3\n')
  })
  test('from m import * binds into the session globals', async () => {
    await g.runBlock('from string import *')
    const out = await g.runBlock('print(ascii_lowercase[:3])')
    assert.equal(out.stdout, 'abc\n')
  })
  test('exec(src) and locals() at block level work on the session globals', async () => {
    await g.runBlock('exec("ex_v = 11")\nlocals()["loc_v"] = 12\nprint(locals() is globals())')
    const out = await g.runBlock('print(ex_v, loc_v)')
    assert.equal(out.stdout, '11 12\n')
  })
  for (const [code, line, what] of [
    ['x = 1\nreturn x', 2, /'return' outside function/],
    ['y = 1\n\nyield y', 3, /'yield' outside function/],
    ['nonlocal q', 1, /nonlocal/],
    ['await echo(1)\nreturn 2', 2, /'return' outside function/],
  ] as const) {
    test(`${JSON.stringify(code)} is a syntax error at line ${line}`, async () => {
      const out = await g.runBlock(code)
      assert.equal(out.error?.phase, 'syntax')
      assert.equal(out.error.line, line)
      assert.match(out.error.message, what)
    })
  }
})

describe('outcomes', () => {
  test('printed output wins over a final expression', async () => {
    const out = await g.runBlock('print("hi")\n1 + 1')
    assert.equal(out.stdout, 'hi\n')
    assert.equal(out.result, undefined)
  })
  test('a final bare expression gives a JSON result; None gives nothing', async () => {
    assert.deepEqual((await g.runBlock('{"a": [1, 2.5, None, True], "t": (1, 2)}')).result, {
      a: [1, 2.5, null, true],
      t: [1, 2],
    })
    const none = await g.runBlock('None')
    assert.equal(none.result, undefined)
    assert.equal(none.stdout, undefined)
    assert.equal(none.error, undefined)
  })
  test('a result the host cannot hold exactly as JSON comes as its repr, never rounded or null', async () => {
    // Integers past 2**53 - 1 (the host's JSON numbers are doubles), inside containers too.
    assert.equal((await g.runBlock('2**53 - 1')).result, 2 ** 53 - 1)
    assert.equal((await g.runBlock('-(2**53 - 1)')).result, -(2 ** 53 - 1))
    assert.equal((await g.runBlock('2**64')).result, '18446744073709551616')
    assert.equal((await g.runBlock('10**400')).result, `1${'0'.repeat(400)}`)
    assert.deepEqual((await g.runBlock('{"n": [2**63, 7], "ok": True}')).result, {
      n: ['9223372036854775808', 7],
      ok: true,
    })
    // Non-finite floats, sets and dicts with other keys: their repr as well.
    assert.equal((await g.runBlock('float("nan")')).result, 'nan')
    assert.equal((await g.runBlock('{1, 2}')).result, '{1, 2}')
    assert.equal((await g.runBlock('{1: "a"}')).result, "{1: 'a'}")
  })

  test('a failure keeps what was printed before it', async () => {
    const out = await g.runBlock('print("before")\nraise RuntimeError("boom")\nprint("after")')
    assert.equal(out.stdout, 'before\n')
    assert.equal(out.error?.phase, 'runtime')
    assert.match(out.error.message, /RuntimeError: boom/)
  })
  test('stdout is UTF-8 with CRLF folded to LF', async () => {
    const out = await g.runBlock('print("a\\r\\nb — é 😀", end="\\r\\n")')
    assert.equal(out.stdout, 'a\nb — é 😀\n')
  })
  test('stdout is capped per block with a visible truncation marker', async () => {
    const out = await g.runBlock('print("x" * 5000)', { stdoutCap: 1000 })
    const text = out.stdout ?? ''
    assert.ok(text.startsWith('x'.repeat(1000)))
    assert.match(text, /output truncated: 4001 more bytes/)
    assert.ok(text.length < 1200)
  })
  test('stderr is merged into the block output in write order', async () => {
    const out = await g.runBlock('import sys\nprint("one")\nprint("two", file=sys.stderr)\nprint("three")')
    assert.equal(out.stdout, 'one\ntwo\nthree\n')
  })
  test('output also streams live to the host', async () => {
    await g.runBlock('print("streamed-marker-123")')
    assert.match(g.streamed(), /streamed-marker-123/)
  })
  test('SystemExit ends the block, not the worker', async () => {
    const out = await g.runBlock('import sys\nsys.exit(3)')
    assert.equal(out.error?.phase, 'runtime')
    assert.match(out.error.message, /SystemExit: 3/)
    assert.equal((await g.runBlock('1')).result, 1)
  })
  test('an exit with status 0 (sys.exit(0), sys.exit(), exit(), quit()) ends the block as a success', async () => {
    const out = await g.runBlock('import sys\nprint("before")\nexit_seen = 1\nsys.exit(0)\nprint("after")')
    assert.deepEqual(out.error, undefined)
    assert.equal(out.stdout, 'before\n', 'what ran before the exit printed; nothing after it ran')
    for (const code of ['sys.exit()', 'exit()', 'quit()', 'raise SystemExit', 'sys.exit(False)']) {
      const r = await g.runBlock(code)
      assert.equal(r.error, undefined, `${code}: ${JSON.stringify(r.error)}`)
    }
    // The python3 idiom: the status of main() decides.
    const main = await g.runBlock(
      'def main():\n    print("in main")\n    return 0\nif __name__ == "__main__":\n    sys.exit(main())',
    )
    assert.deepEqual([main.stdout, main.error], ['in main\n', undefined])
    const failed = await g.runBlock('sys.exit("fatal: no input")')
    assert.equal(failed.error?.phase, 'runtime')
    assert.match(failed.error.message, /^SystemExit: fatal: no input/)
    assert.equal((await g.runBlock('exit_seen')).result, 1, 'the session goes on with its names')
  })
  test('an interrupt keeps the partial stdout and says interrupted', async () => {
    const run = g.runBlock('import time\nprint("started", flush=True)\nwhile True: time.sleep(0.01)')
    while (!g.streamed().includes('started')) await new Promise((r) => setTimeout(r, 10))
    g.interrupt()
    const out = await run
    assert.equal(out.error?.phase, 'interrupted')
    assert.equal(out.stdout, 'started\n')
    assert.equal(out.error.line, 3)
    assert.equal((await g.runBlock('2')).result, 2)
  })
})

describe('timeouts', () => {
  test('a timeout keeps the partial output and says timedOut', async () => {
    const out = await g.runBlock('import time\nprint("partial", flush=True)\ntime.sleep(30)', {
      timeoutMs: 400,
    })
    assert.equal(out.timedOut, true)
    assert.equal(out.error?.phase, 'timeout')
    assert.equal(out.stdout, 'partial\n')
    assert.equal((await g.runBlock('3')).result, 3)
  })
})

describe('auto-imports', () => {
  test('auto-imported names live in builtins, not in globals', async () => {
    const fresh = await startGuest()
    const names = ['json', 're', 'os', 'sys', 'time', 'shlex', 'hashlib', 'glob', 'collections', 'Counter']
    names.push('pathlib', 'Path', 'textwrap', 'base64', 'math', 'socket', 'datetime')
    const out = await fresh.runBlock(
      `import builtins\nnames = ${JSON.stringify(names)}\nprint([n for n in names if n in globals()], [n for n in names if not hasattr(builtins, n)])\nprint(json.dumps({"k": 1}), math.sqrt(16), Counter("aab")["a"], Path("/a/b").name, base64.b64encode(b"x").decode(), hashlib.sha1(b"").hexdigest()[:6], datetime.date(2020, 1, 2).isoformat())`,
    )
    await fresh.close()
    assert.equal(out.stdout, '[] []\n{"k": 1} 4.0 2 b eA== da39a3 2020-01-02\n')
  })
  test('a lazily imported module becomes the real module after first use', async () => {
    const out = await g.runBlock(
      'shlex.split("a b")\nimport builtins, sys\nprint(builtins.shlex is sys.modules["shlex"])',
    )
    assert.equal(out.stdout, 'True\n')
  })
})
