// The pure-TypeScript helpers, checked against a real CPython where Python reads their output.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { describe, test } from 'node:test'
import { boundaryView, ctxToPythonStr, pyJsonLiteral, symToPyName } from '../../src/guest/index.js'
import { isVisError } from '../../src/util/errors.js'
import { pythonBinary } from './harness.js'

// Evaluates Python expressions (one per line) and returns json.dumps of each, in one process.
function pyEval(exprs: string[]): unknown[] {
  const script =
    'import ast, json, sys\nfor line in sys.stdin.read().split("\\0"):\n    print(json.dumps(ast.literal_eval(line)))'
  const r = spawnSync(pythonBinary(), ['-I', '-S', '-c', script], {
    input: exprs.join('\0'),
    encoding: 'utf8',
  })
  assert.equal(r.status, 0, r.stderr)
  return r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
}

const tricky: unknown[] = [
  'a/b</script>/',
  'emoji 😀 and 𝔘 and mixed é',
  'quotes \' " both',
  "only 'single'",
  'back\\slash \\n not newline',
  'ctl \u0000 \u0007 \u001b \u007f \u2028 \u2029 \ufeff',
  'lone \ud800 surrogate',
  'tabs\tand\r\nlines\n',
  { nested: { list: [1, -2.5, 1e21, 1e-7, 0, -0, null, true, false], '': 'empty key', 'k/with/slash': [] } },
  [],
  {},
  123456789012,
]

describe('pyJsonLiteral', () => {
  test('evaluates in Python to the same data, for every tricky string', () => {
    const back = pyEval(tricky.map((v) => pyJsonLiteral(v)))
    assert.deepEqual(back, JSON.parse(JSON.stringify(tricky)))
  })
  test('non-BMP characters are one code point in Python', () => {
    const r = spawnSync(
      pythonBinary(),
      ['-I', '-S', '-c', `import sys; print(len(${pyJsonLiteral('😀')}))`],
      {
        encoding: 'utf8',
      },
    )
    assert.equal(r.stdout.trim(), '1')
  })
  test('is one line and deterministic', () => {
    const v = { b: 1, a: [1, 2, { c: 'x' }] }
    assert.equal(pyJsonLiteral(v), "{'b': 1, 'a': [1, 2, {'c': 'x'}]}")
    assert.equal(pyJsonLiteral(v), pyJsonLiteral(structuredClone(v)))
  })
})

describe('ctxToPythonStr', () => {
  test('keeps insertion order and fits short values on one line', () => {
    assert.equal(ctxToPythonStr({ z: 1, a: [true, null], m: 'x' }), "{'z': 1, 'a': [True, None], 'm': 'x'}")
  })
  test('breaks what does not fit in 100 columns, one item per line', () => {
    const ctx = {
      user: 'ann',
      files: Array.from({ length: 12 }, (_, i) => `/work/project/src/module_${i}.py`),
      n: 3,
    }
    const text = ctxToPythonStr(ctx)
    for (const line of text.split('\n')) assert.ok(line.length <= 100, line)
    assert.equal(
      text.split('\n').slice(0, 4).join('\n'),
      "{\n    'user': 'ann',\n    'files': [\n        '/work/project/src/module_0.py',",
    )
    assert.ok(text.endsWith("    ],\n    'n': 3,\n}"))
  })
  test('evaluates in Python to the data, for every tricky value', () => {
    const big = { items: tricky, long: 'y'.repeat(150) }
    const [back] = pyEval([ctxToPythonStr(big).replace(/\n/g, ' ')])
    assert.deepEqual(back, JSON.parse(JSON.stringify(big)))
  })
  test('never enters Python and is deterministic', () => {
    const ctx = { a: [1, 2], b: { c: 'd' } }
    assert.equal(ctxToPythonStr(ctx), ctxToPythonStr(JSON.parse(JSON.stringify(ctx))))
  })
})

describe('boundaryView', () => {
  test('returns what the value looks like after the round trip', () => {
    assert.deepEqual(boundaryView({ a: [1, 'x', null], b: { c: false }, z: -0 }), {
      a: [1, 'x', null],
      b: { c: false },
      z: 0,
    })
  })
  for (const [value, path] of [
    [{ a: { b: [1, undefined] } }, '$.a.b[1]'],
    [{ f: () => 1 }, '$.f'],
    [{ n: [Number.NaN] }, '$.n[0]'],
    [{ d: new Date(0) }, '$.d'],
    [{ m: new Map([[1, 2]]) }, '$.m'],
    [{ 'odd key': { big: 1n } }, '$["odd key"].big'],
    [{ s: Object.assign(new Array(3), { 0: 1, 2: 3 }) }, '$.s[1]'],
    [{ [Symbol('k')]: 1 }, '$'],
  ] as const) {
    test(`throws naming ${path}`, () => {
      assert.throws(
        () => boundaryView(value),
        (e: unknown) =>
          isVisError(e, 'boundary.not-json') && e.context.path === path && e.message.includes(path),
      )
    })
  }
  test('a cycle throws naming where it closes', () => {
    const a: Record<string, unknown> = { x: [] }
    ;(a.x as unknown[]).push(a)
    assert.throws(() => boundaryView(a), /a cycle at \$\.x\[0\]/)
  })
})

describe('symToPyName', () => {
  for (const [sym, name] of [
    ['git/status', 'git_status'],
    ['commit!', 'commit'],
    ['file-exists?', 'is_file_exists'],
    ['is-dir?', 'is_dir'],
    ['read.file', 'read_file'],
    ['2fa', '_2fa'],
    ['class', 'class_'],
    ['_private', '_private'],
    ['a--b//c', 'a_b_c'],
  ] as const) {
    test(`${sym} → ${name}`, () => {
      assert.equal(symToPyName(sym), name)
    })
  }
  test('a symbol with nothing usable throws', () => {
    assert.throws(() => symToPyName('?!'), /no characters a Python name can use/)
  })
})
