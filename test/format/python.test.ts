import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Lru } from '../../src/format/lru.js'
import { formatPythonForDisplay, MAX_FORMAT_CHARS, PythonFormatter } from '../../src/format/python.js'
import { ruffEngine } from '../../src/format/ruff.js'

test('valid model Python is formatted by ruff, top-level await included', () => {
  const f = new PythonFormatter()
  const r = f.format("x=1\nif x :\n  print( 'a' )\nawait read_file( 'a.txt',n=2)\n")
  assert.equal(r.status, 'formatted')
  assert.equal(r.code, "x = 1\nif x:\n    print('a')\nawait read_file('a.txt', n=2)\n")
  assert.equal(formatPythonForDisplay('y=[1,2 ,3]'), 'y = [1, 2, 3]\n')
})

test('code that does not parse comes back verbatim with the parser message', () => {
  const f = new PythonFormatter()
  const code = 'def (:\n  x = = 2\n'
  const r = f.format(code)
  assert.equal(r.status, 'verbatim')
  assert.equal(r.reason, 'parse-error')
  assert.equal(r.code, code)
  assert.match(r.detail ?? '', /Expected/)
})

test('huge code is returned verbatim without being formatted', () => {
  let calls = 0
  const f = new PythonFormatter({
    engine: () => {
      const e = ruffEngine()!
      return {
        version: e.version,
        format: (c) => {
          calls++
          return e.format(c)
        },
      }
    },
  })
  const huge = 'x=1\n'.repeat(MAX_FORMAT_CHARS / 4 + 1)
  const r = f.format(huge)
  assert.equal(r.status, 'verbatim')
  assert.equal(r.reason, 'too-large')
  assert.equal(r.code, huge)
  assert.equal(calls, 0)
  // Just under the cap is still formatted.
  const big = 'x=1\n'.repeat(MAX_FORMAT_CHARS / 4 - 1)
  assert.equal(f.format(big).code, 'x = 1\n'.repeat(MAX_FORMAT_CHARS / 4 - 1))
  assert.equal(calls, 1)
})

test('results are memoised by content in a bounded LRU', () => {
  let calls = 0
  const f = new PythonFormatter({
    cacheEntries: 2,
    engine: () => ({
      version: 't',
      format: (c) => {
        calls++
        return `${c.trim()}  # formatted\n`
      },
    }),
  })
  assert.equal(f.format('a').code, 'a  # formatted\n')
  assert.equal(f.format('a').code, 'a  # formatted\n')
  assert.equal(calls, 1)
  f.format('b')
  f.format('c') // evicts 'a'
  assert.equal(f.cachedEntries, 2)
  f.format('a')
  assert.equal(calls, 4)
})

test('without ruff the code is shown as written', () => {
  const f = new PythonFormatter({ engine: () => undefined })
  assert.deepEqual(f.format('x=1'), { code: 'x=1', status: 'verbatim', reason: 'unavailable' })
})

test('the process keeps one ruff workspace', () => {
  assert.equal(ruffEngine(), ruffEngine())
})

test('Lru evicts the least recently used entry', () => {
  const l = new Lru<string, number>(2)
  l.set('a', 1)
  l.set('b', 2)
  assert.equal(l.get('a'), 1)
  l.set('c', 3)
  assert.equal(l.get('b'), undefined)
  assert.equal(l.get('a'), 1)
  assert.equal(l.get('c'), 3)
})

// Fourteenth outsider pass: ruff's output was unbounded (4 KB of nested literal formatted to 3.8 MB).
test('a formatted code many times longer than its input is shown as written, and remembered', () => {
  const nested = `x = ${'[a, '.repeat(800)}1${']'.repeat(800)}\n`
  const f = new PythonFormatter()
  const r = f.format(nested)
  assert.equal(r.status, 'verbatim')
  assert.equal(r.reason, 'too-large')
  assert.equal(r.code, nested)
  assert.match(r.detail ?? '', /formatted, the code would be \d+ characters/)
  assert.equal(f.format(nested), r)
  // Allowed: a long data table nested in a function, broken one element a line, still formats.
  const table = `def f():\n    if True:\n        return [${Array.from({ length: 400 }, (_, i) => i).join(', ')}]\n`
  const t = f.format(table)
  assert.equal(t.status, 'formatted', t.detail)
  assert.ok(t.code.length > table.length)
})

test("the cache's memory is bounded in characters as well as entries", () => {
  const f = new PythonFormatter({
    cacheEntries: 1000,
    cacheChars: 10_000,
    engine: () => ({ version: 't', format: (c) => c.toUpperCase() }),
  })
  for (let i = 0; i < 50; i++) f.format(`${'a'.repeat(1000)}${i}`)
  assert.ok(f.cachedChars <= 10_000, `the cache holds ${f.cachedChars} characters`)
  assert.ok(f.cachedEntries < 50)
  assert.ok(f.cachedEntries > 0)
})

test('Lru with a weight bound evicts the coldest entries and keeps nothing heavier than the bound', () => {
  const l = new Lru<string, string>(10, { maxWeight: 5, weigh: (v) => v.length })
  l.set('a', 'xx')
  l.set('b', 'yy')
  assert.equal(l.get('a'), 'xx')
  l.set('c', 'zz') // 6 > 5: 'b', the coldest, goes
  assert.equal(l.get('b'), undefined)
  assert.equal(l.weight, 4)
  l.set('d', 'wwwwww')
  assert.equal(l.get('d'), undefined)
  assert.equal(l.weight, 4)
  l.set('a', 'x')
  assert.equal(l.weight, 3)
})
