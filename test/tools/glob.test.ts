// The include-glob dialect, matched without backtracking: what each token matches, and the
// refusals of globs the matcher will not take.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  compileGlob,
  GLOB_MAX_LENGTH,
  globMatcher,
  INCLUDE_MAX_GLOBS,
  INCLUDE_MAX_TOTAL,
} from '../../src/tools/fs/glob.js'
import { VisError } from '../../src/util/errors.js'
import { Pacer } from '../../src/util/pacer.js'

const cases: [glob: string, path: string, want: boolean][] = [
  ['*.ts', 'a.ts', true],
  ['*.ts', 'dir/a.ts', false],
  ['?.ts', 'a.ts', true],
  ['?.ts', 'ab.ts', false],
  ['?', '/', false],
  ['**', 'a/b/c', true],
  ['**/*.ts', 'a.ts', true],
  ['**/*.ts', 'x/y/a.ts', true],
  ['src/**/*.ts', 'src/a.ts', true],
  ['src/**/*.ts', 'src/x/y/a.ts', true],
  ['src/**/*.ts', 'lib/a.ts', false],
  ['src/**', 'src/x/a.py', true],
  ['a**b', 'a/x/b', true],
  ['[abc].py', 'b.py', true],
  ['[abc].py', 'd.py', false],
  ['[!abc].py', 'd.py', true],
  ['[!abc].py', 'a.py', false],
  ['[a-c]x', 'bx', true],
  ['[a', '[a', true],
  ['*.{ts,js}', 'a.js', true],
  ['*.{ts,js}', 'a.py', false],
  ['{src,lib}/**/*.{ts,tsx}', 'lib/x/a.tsx', true],
  ['{a,{b,c}}.txt', 'c.txt', true],
  ['a+b(c).txt', 'a+b(c).txt', true],
  ['a.b', 'axb', false],
  ['x}', 'x}', true],
  ['x,y', 'x,y', true],
  ['**a'.repeat(12) + '**b', 'a'.repeat(200), false],
  ['**a'.repeat(12) + '**', 'a'.repeat(200), true],
]

test('each token of the glob dialect matches what it should', () => {
  for (const [glob, path, want] of cases) assert.equal(compileGlob(glob)(path), want, `${glob} vs ${path}`)
})

test('a glob without / matches the name at any depth, one with / the relative path', () => {
  const m = globMatcher(['*.py', './docs/*.md'])
  assert.equal(m('a/b/c.py'), true)
  assert.equal(m('docs/x.md'), true)
  assert.equal(m('other/docs/x.md'), false)
  assert.equal(globMatcher([])('anything'), true)
})

test('the matcher is linear: a pathological glob against a long name returns at once', () => {
  const start = performance.now()
  const m = compileGlob('**a'.repeat(300) + '**b')
  assert.equal(m('a'.repeat(4000)), false)
  assert.ok(performance.now() - start < 2000, `took ${Math.round(performance.now() - start)} ms`)
})

test('too long, unclosed or bad globs are refused with tool.bad-glob', () => {
  for (const g of ['x'.repeat(GLOB_MAX_LENGTH + 1), '{a,b', '[z-a]']) {
    assert.throws(
      () => compileGlob(g),
      (e: unknown) => e instanceof VisError && e.code === 'tool.bad-glob' && /include glob/.test(e.message),
      g.slice(0, 20),
    )
  }
})

test('an include list past its count or total size is refused with tool.bad-glob; one within them works', async () => {
  const many = Array.from({ length: INCLUDE_MAX_GLOBS + 1 }, (_, i) => `*.x${i}`)
  const big = Array.from({ length: 4 }, () => 'y'.repeat(Math.ceil(INCLUDE_MAX_TOTAL / 4) + 1))
  for (const list of [many, big]) {
    assert.throws(
      () => globMatcher(list),
      (e: unknown) =>
        e instanceof VisError &&
        e.code === 'tool.bad-glob' &&
        /limits are/.test(e.message) &&
        /\{a,b\}/.test(e.message),
    )
  }
  const ok = globMatcher(many.slice(0, INCLUDE_MAX_GLOBS))
  assert.equal(ok('d/a.x63'), true)
  assert.equal(await ok.paced('d/a.x63', new Pacer()), true)
  assert.equal(await ok.paced('d/a.y', new Pacer()), false)
})

test('the paced include test lets the event loop run while it matches a costly glob', async () => {
  const m = globMatcher([`${'**a'.repeat(340)}/b`])
  const path = `${'a'.repeat(250)}/`.repeat(15)
  let ticks = 0
  const timer = setInterval(() => ticks++, 1)
  const pace = new Pacer()
  let matched = false
  for (let i = 0; i < 10 && ticks === 0; i++) matched ||= await m.paced(path, pace)
  clearInterval(timer)
  assert.equal(matched, false)
  assert.ok(ticks > 0, 'a timer ran while the glob was matched')
})
