// Building code objects by hand is refused (issue 13, section 5): the audit hook refuses the
// `code.__new__` event, which types.CodeType(...) and code.replace(...) raise on 3.11 and 3.12.
// The standard library's one run-time use (types.coroutine marking a generator) still works,
// and so do compile/exec, imports, pickle, functools and friends. Through real sessions.
// It lives in test/guest so it runs against every staged Python minor (scripts/test.mjs).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import type { Session } from '../../src/sessions/session.js'
import { python, tempHome } from '../sessions/helpers.js'

const { home, root } = tempHome('codeobj')
let rt: Runtime
let s: Session

before(async () => {
  rt = await createRuntime({ home, python, pool: { size: 0 }, defaultTools: false })
  s = await rt.createSession({ roots: [root] })
})
after(async () => {
  await s.dispose()
  await rt.close()
})

const REFUSED =
  /PermissionError: vis: building a code object by hand \(types\.CodeType\(\.\.\.\) or code\.replace\(\.\.\.\)\) is not allowed: crafted bytecode could corrupt the worker; write the function as Python source instead \[code\.__new__\]/

// Each attempt runs in its own block, uncaught, so the block error itself is checked.
const ATTEMPTS: Array<[string, string]> = [
  [
    'types.CodeType(...) with every field of a real code object',
    [
      'import types',
      'def f(x):',
      '    return x + 1',
      'c = f.__code__',
      'fields = ["co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_nlocals", "co_stacksize",',
      '          "co_flags", "co_code", "co_consts", "co_names", "co_varnames", "co_filename", "co_name",',
      '          "co_qualname", "co_firstlineno", "co_linetable", "co_exceptiontable", "co_freevars", "co_cellvars"]',
      'types.CodeType(*[getattr(c, n) for n in fields])',
    ].join('\n'),
  ],
  [
    'code.replace(co_code=...) with crafted bytes',
    'def f():\n    return 1\nf.__code__ = f.__code__.replace(co_code=bytes(len(f.__code__.co_code)))',
  ],
  ['code.replace of constants only', 'def f():\n    return 1\nf.__code__.replace(co_consts=(None, 2))'],
  [
    'type(code)(...) reached through a lambda',
    'CT = type((lambda: 0).__code__)\nCT(0, 0, 0, 0, 0, 0, b"", (), (), (), "", "", "", 1, b"", b"", (), ())',
  ],
  [
    'the import system as a trampoline: _call_with_frames_removed(CodeType, ...)',
    [
      'import importlib._bootstrap as b',
      'CT = type((lambda: 0).__code__)',
      'b._call_with_frames_removed(CT, 0, 0, 0, 0, 0, 0, b"", (), (), (), "", "", "", 1, b"", b"", (), ())',
    ].join('\n'),
  ],
  [
    'the import system running a library-looking callable: _call_with_frames_removed(code.replace)',
    [
      'import importlib._bootstrap as b',
      'def f():',
      '    return 1',
      'b._call_with_frames_removed(f.__code__.replace, co_code=bytes(len(f.__code__.co_code)))',
    ].join('\n'),
  ],
  [
    'types.coroutine rebound to a function of our own',
    [
      'import types',
      'def coroutine(f):',
      '    f.__code__ = f.__code__.replace(co_code=bytes(len(f.__code__.co_code)))',
      '    return f',
      'types.coroutine = coroutine',
      '@types.coroutine',
      'def gen():',
      '    yield 1',
    ].join('\n'),
  ],
]

for (const [what, code] of ATTEMPTS) {
  test(`refused: ${what}`, async () => {
    const r = await s.runBlock(code, { timeoutMs: 60_000 })
    assert.equal(r.error?.phase, 'runtime', JSON.stringify(r))
    assert.match(r.error?.message ?? '', REFUSED)
    assert.ok((r.error?.flags as string[] | undefined)?.includes('sandbox'), JSON.stringify(r.error))
    assert.match(r.error?.message ?? '', /hint: sandbox: code objects are never built by hand here/)
  })
}

test('compiling under a filename of the distribution is refused, so guest code cannot pass for library code', async () => {
  const r = await s.runBlock(
    [
      'import types',
      'src = "def coroutine(f):\\n    return f.__code__.replace(co_code=bytes(len(f.__code__.co_code)))\\n"',
      'ns = {}',
      'exec(compile(src, types.__file__, "exec"), ns)',
    ].join('\n'),
    { timeoutMs: 60_000 },
  )
  assert.equal(r.error?.phase, 'runtime', JSON.stringify(r))
  assert.match(
    r.error?.message ?? '',
    /PermissionError: vis: compiling source under the filename '.*types\.py' .*\[compile\]/,
  )
  assert.match(r.error?.message ?? '', /hint: sandbox: code compiled here cannot pass/)
  // The library's own bytes under its own name still compile (the import system does this
  // for a module without a .pyc).
  const own = await s.runBlock(
    'import types\nwith open(types.__file__, "rb") as fh:\n    data = fh.read()\nprint(type(compile(data, types.__file__, "exec")).__name__)',
  )
  assert.equal(own.error, undefined, JSON.stringify(own.error))
  assert.equal(own.stdout, 'code\n')
})

test('a library trampoline outside an import (a thread) does not make code.replace pass', async () => {
  const r = await s.runBlock(
    [
      'import threading',
      'errors = []',
      'threading.excepthook = lambda a: errors.append(str(a.exc_value))',
      'def f():',
      '    return 1',
      't = threading.Thread(target=f.__code__.replace, kwargs={"co_code": bytes(len(f.__code__.co_code))})',
      't.start()',
      't.join()',
      'print(len(errors), "[code.__new__]" in errors[0])',
    ].join('\n'),
    { timeoutMs: 60_000 },
  )
  assert.equal(r.error, undefined, JSON.stringify(r.error))
  assert.equal(r.stdout, '1 True\n')
})

test('the refusal is catchable as PermissionError, and the session goes on', async () => {
  const r = await s.runBlock(
    'def f():\n    return 1\ntry:\n    f.__code__.replace(co_code=f.__code__.co_code)\nexcept PermissionError as e:\n    print("refused:", "[code.__new__]" in str(e))\nprint(f())',
  )
  assert.equal(r.error, undefined, JSON.stringify(r.error))
  assert.equal(r.stdout, 'refused: True\n1\n')
})

test('everyday code that makes code objects the ordinary way is unaffected', async () => {
  // A fresh session: an attack above rebound types.coroutine in the shared one.
  const fresh = await rt.createSession({ roots: [root] })
  const r = await fresh.runBlock(
    [
      'import asyncio, collections, copy, dataclasses, enum, functools, importlib, inspect, json, pickle, types, typing',
      'import fractions, statistics, decimal, timeit, string',
      'code = compile("def g(a):\\n    return a * 2\\n", "<made>", "exec")',
      'ns = {}',
      'exec(code, ns)',
      'out = [ns["g"](21), eval("1 + 1")]',
      '@dataclasses.dataclass',
      'class Point:',
      '    x: int',
      '    y: int = 0',
      'out.append(pickle.loads(pickle.dumps(Point(1, 2))) == Point(1, 2))',
      'out.append(copy.deepcopy([Point(3)])[0].x)',
      'Pair = collections.namedtuple("Pair", "a b")',
      'out.append(Pair(1, 2).b)',
      'class Color(enum.Enum):',
      '    RED = 1',
      'out.append(Color(1).name)',
      '@functools.lru_cache',
      'def sq(n):',
      '    return n * n',
      '@functools.singledispatch',
      'def kind(v):',
      '    return "other"',
      '@kind.register',
      'def _(v: int):',
      '    return "int"',
      'out.append([sq(4), functools.partial(sq, 5)(), kind(1), kind("x")])',
      'T = typing.NamedTuple("T", [("a", int)])',
      'out.append(T(7).a)',
      'out.append(str(inspect.signature(sq.__wrapped__)))',
      '# types.coroutine on a generator: the one code.replace the standard library makes',
      '@types.coroutine',
      'def legacy():',
      '    yield',
      '    return "legacy"',
      'async def main():',
      '    await asyncio.sleep(0)',
      '    return await legacy()',
      'out.append(asyncio.run(main()))',
      'out.append(float(statistics.mean([fractions.Fraction(1, 2), decimal.Decimal(1).__int__()])))',
      'out.append(timeit.timeit("1 + 1", number=5) >= 0)',
      'out.append(string.Template("$a").substitute(a="t"))',
      'importlib.reload(string)',
      'f = lambda: 1',
      'f.__code__ = (lambda: 2).__code__  # swapping in a compiled code object is fine',
      'out.append(f())',
      'print(json.dumps(out))',
    ].join('\n'),
    { timeoutMs: 120_000 },
  )
  assert.equal(r.error, undefined, JSON.stringify(r.error))
  assert.deepEqual(JSON.parse(r.stdout ?? ''), [
    42,
    2,
    true,
    3,
    2,
    'RED',
    [16, 25, 'int', 'other'],
    7,
    '(n)',
    'legacy',
    0.75,
    true,
    't',
    2,
  ])
  await fresh.dispose()
})
