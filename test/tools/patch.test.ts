import assert from 'node:assert/strict'
import { chmod, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { catTool } from '../../src/tools/fs/cat.js'
import { patchTool, SEARCH_MAX_TOLERANT_CHARS } from '../../src/tools/fs/patch.js'
import { call, context, files, guardFor, rejection, tempDir } from './helpers.js'

async function setup(tree: Record<string, string>) {
  const ws = await tempDir()
  await files(ws, tree)
  const guard = guardFor([ws])
  return { ws, cat: catTool(guard), patch: patchTool(guard), ctx: context([ws]) }
}

const anchorsOf = (content: string) => content.split('\n').map((l) => l.slice(0, l.indexOf('|')))
const read = (ws: string, p: string) => readFile(join(ws, p), 'utf8')

test('anchors from cat drive patch: replace a range, delete a line, get fresh anchors', async () => {
  const { ws, cat, patch, ctx } = await setup({ 'a.txt': 'one\ntwo\nthree\nfour\nfive\n' })
  const a = anchorsOf((await call(cat, ctx, 'a.txt')).content)
  const r = await call(patch, ctx, [
    { path: 'a.txt', from_anchor: a[1], to_anchor: a[2], replace: 'TWO\nTHREE\nTHREE-AND-A-HALF' },
    { path: 'a.txt', from_anchor: a[4], replace: '' },
  ])
  assert.equal(await read(ws, 'a.txt'), 'one\nTWO\nTHREE\nTHREE-AND-A-HALF\nfour\n')
  const changed = r.files[0].changed
  assert.equal(changed[0].from_line, 2)
  assert.equal(changed[0].lines.length, 3)
  // The returned anchors are valid for a follow-up edit.
  await call(patch, ctx, [{ path: 'a.txt', from_anchor: changed[0].lines[2].split('|')[0], replace: '3.5' }])
  assert.equal(await read(ws, 'a.txt'), 'one\nTWO\nTHREE\n3.5\nfour\n')
  // Deleting the last line of a file without a final newline leaves no stray break.
  await writeFile(join(ws, 'b.txt'), 'x\ny')
  const b = anchorsOf((await call(cat, ctx, 'b.txt')).content)
  await call(patch, ctx, { path: 'b.txt', from_anchor: b[1], replace: '' })
  assert.equal(await read(ws, 'b.txt'), 'x')
})

test('a stale anchor is re-located by its hash nearby', async () => {
  const { ws, cat, patch, ctx } = await setup({ 'a.py': 'def f():\n    return 1\n' })
  const a = anchorsOf((await call(cat, ctx, 'a.py')).content)
  // Someone inserts lines above after the model read the file.
  await writeFile(join(ws, 'a.py'), 'import os\nimport sys\n\ndef f():\n    return 1\n')
  const r = await call(patch, ctx, [{ path: 'a.py', from_anchor: a[1], replace: '    return 2' }])
  assert.equal(await read(ws, 'a.py'), 'import os\nimport sys\n\ndef f():\n    return 2\n')
  assert.deepEqual(r.files[0].relocated, [{ anchor: a[1], line: 5 }])
})

test('a stale anchor whose line is gone is refused with the current text around it', async () => {
  const { ws, cat, patch, ctx } = await setup({ 'a.txt': 'alpha\nbeta\ngamma\n' })
  const a = anchorsOf((await call(cat, ctx, 'a.txt')).content)
  await writeFile(join(ws, 'a.txt'), 'alpha\nBETA\ngamma\n')
  const err = await rejection(call(patch, ctx, [{ path: 'a.txt', from_anchor: a[1], replace: 'b' }]))
  assert.equal(err.code, 'tool.anchor-stale')
  assert.match(err.message, /2:[0-9a-f]{6}\|BETA/)
  assert.match(err.context.current, /1:[0-9a-f]{6}\|alpha\n2:[0-9a-f]{6}\|BETA\n3:[0-9a-f]{6}\|gamma/)
  assert.equal(await read(ws, 'a.txt'), 'alpha\nBETA\ngamma\n')
})

test('edits across files are atomic: one bad edit changes nothing anywhere', async () => {
  const { ws, cat, patch, ctx } = await setup({ 'a.txt': 'a1\na2\n', 'b.txt': 'b1\nb2\n' })
  const a = anchorsOf((await call(cat, ctx, 'a.txt')).content)
  const err = await rejection(
    call(patch, ctx, [
      { path: 'a.txt', from_anchor: a[0], replace: 'A1' },
      { path: 'b.txt', search: 'b2', replace: 'B2' },
      { path: 'b.txt', search: 'not there at all', replace: 'x' },
    ]),
  )
  assert.equal(err.code, 'tool.no-match')
  assert.equal(await read(ws, 'a.txt'), 'a1\na2\n')
  assert.equal(await read(ws, 'b.txt'), 'b1\nb2\n')
  const overlap = await rejection(
    call(patch, ctx, [
      { path: 'a.txt', from_anchor: a[0], to_anchor: a[1], replace: 'x' },
      { path: 'a.txt', from_anchor: a[1], replace: 'y' },
    ]),
  )
  assert.equal(overlap.code, 'tool.bad-args')
  assert.match(overlap.message, /overlap/)
  // The same call without the bad edit applies to both files.
  await call(patch, ctx, [
    { path: 'a.txt', from_anchor: a[0], replace: 'A1' },
    { path: 'b.txt', search: 'b2', replace: 'B2' },
  ])
  assert.equal(await read(ws, 'a.txt'), 'A1\na2\n')
  assert.equal(await read(ws, 'b.txt'), 'b1\nB2\n')
})

test('exact search replaces a unique match; whitespace-tolerant fallback re-indents', async () => {
  const { ws, patch, ctx } = await setup({
    'm.py': 'class A:\n    def f(self):\n        x  =  1\n        return x\n',
    'dup.txt': 'same\nsame\n',
    'crlf.txt': 'one\r\ntwo\r\n',
  })
  await call(patch, ctx, [{ path: 'm.py', search: 'return x', replace: 'return x + 1' }])
  assert.match(await read(ws, 'm.py'), /return x \+ 1\n$/)
  // Wrong indentation and spacing in the search still finds the lines.
  await call(patch, ctx, [
    { path: 'm.py', search: 'def f(self):\n    x = 1', replace: 'def f(self):\n    x = 2\n    y = 3' },
  ])
  assert.equal(
    await read(ws, 'm.py'),
    'class A:\n    def f(self):\n        x = 2\n        y = 3\n        return x + 1\n',
  )
  const amb = await rejection(call(patch, ctx, [{ path: 'dup.txt', search: 'same', replace: 'x' }]))
  assert.equal(amb.code, 'tool.match-ambiguous')
  // CRLF files keep their line breaks.
  await call(patch, ctx, [{ path: 'crlf.txt', search: 'two', replace: 'TWO\nTHREE' }])
  assert.equal(await read(ws, 'crlf.txt'), 'one\r\nTWO\r\nTHREE\r\n')
})

test('edits that break a parsing Python, TypeScript, JavaScript or JSON file are refused', async () => {
  const { ws, patch, ctx } = await setup({
    'ok.py': 'def f():\n    return 1\n',
    'ok.ts': 'export const x: number = 1\n',
    'ok.js': 'const y = [1, 2]\n',
    'ok.json': '{"a": 1}\n',
    'broken.json': '{"a": \n',
    'notes.txt': 'anything\n',
  })
  const cases: [string, string, string, RegExp][] = [
    ['ok.py', 'return 1', 'return (1', /ok\.py.*line 2/],
    ['ok.ts', '= 1', '= (1', /ok\.ts.*line 2|ok\.ts.*expected/],
    ['ok.js', '[1, 2]', '[1, 2', /ok\.js/],
    ['ok.json', '1}', '1,}', /ok\.json/],
  ]
  for (const [path, search, replace, msg] of cases) {
    const before = await read(ws, path)
    const err = await rejection(call(patch, ctx, [{ path, search, replace }]))
    assert.equal(err.code, 'tool.syntax', path)
    assert.match(err.message, msg)
    assert.equal(await read(ws, path), before)
  }
  // Valid edits pass; a file that did not parse before may stay broken; other types are unchecked.
  await call(patch, ctx, [{ path: 'ok.py', search: 'return 1', replace: 'return (1)' }])
  await call(patch, ctx, [{ path: 'ok.ts', search: '= 1', replace: '= 2' }])
  await call(patch, ctx, [{ path: 'broken.json', search: '"a"', replace: '"b"' }])
  await call(patch, ctx, [{ path: 'notes.txt', search: 'anything', replace: '{{{' }])
  assert.equal(await read(ws, 'ok.py'), 'def f():\n    return (1)\n')
})

test('patch argument errors name the problem', async () => {
  const { patch, ctx } = await setup({ 'a.txt': 'a\n' })
  assert.equal((await rejection(call(patch, ctx, []))).code, 'tool.bad-args')
  const bad = await rejection(call(patch, ctx, [{ path: 'a.txt', from_anchor: 'line one', replace: '' }]))
  assert.equal(bad.code, 'tool.bad-args')
  assert.match(bad.message, /not an anchor/)
  assert.equal(
    (await rejection(call(patch, ctx, [{ path: 'none.txt', search: 'a', replace: 'b' }]))).code,
    'tool.not-found',
  )
})

test('syntax checks stop at their size caps, and the result says the file was not checked', async () => {
  const under = `x = [${'1,'.repeat(60_000)}]\n` // 120 KB: .js under its 128 KiB cap
  const over = `x = [${'1,'.repeat(70_000)}]\n` // 140 KB: over it
  const { ws, patch, ctx } = await setup({ 'under.js': under, 'over.js': over, 'over.py': over })
  const err = await rejection(call(patch, ctx, [{ path: 'under.js', search: 'x = [', replace: 'x = ([' }]))
  assert.equal(err.code, 'tool.syntax')
  const r = await call(patch, ctx, [{ path: 'over.js', search: 'x = [', replace: 'x = ([' }])
  assert.match(r.files[0].syntax_unchecked, /over the 131072-byte limit for syntax checks/)
  assert.ok((await read(ws, 'over.js')).startsWith('x = (['))
  // Python's cap is 256 KiB: the same text is still checked there.
  const py = await rejection(call(patch, ctx, [{ path: 'over.py', search: 'x = [', replace: 'x = ([' }]))
  assert.equal(py.code, 'tool.syntax')
})

test('the whitespace-tolerant search has a work bound; within it, it still finds the lines', async () => {
  const { ws, patch, ctx } = await setup({ 'a.txt': 'a\n'.repeat(6000), 'b.txt': 'x\n  one   two\ny\n' })
  const err = await rejection(
    call(patch, ctx, [{ path: 'a.txt', search: `${'a\n'.repeat(3000)}b`, replace: 'z' }]),
  )
  assert.equal(err.code, 'tool.search-too-costly')
  assert.match(err.message, /more specific search/)
  assert.equal(await read(ws, 'a.txt'), 'a\n'.repeat(6000))
  await call(patch, ctx, [{ path: 'b.txt', search: 'one two', replace: 'ONE' }])
  assert.equal(await read(ws, 'b.txt'), 'x\n  ONE\ny\n')
})

test('a file past the tolerant-search size is searched exactly, and refused tolerantly before any line is normalised', async () => {
  const big = `head\n${'x y\n'.repeat(SEARCH_MAX_TOLERANT_CHARS / 4 + 1)}tail\n`
  const { ws, cat, patch, ctx } = await setup({ 'big.txt': big })
  const err = await rejection(
    call(patch, ctx, [
      { path: 'big.txt', search: 'tail', replace: 'TAIL' },
      { path: 'big.txt', search: 'x  y\nnot here', replace: 'z' },
    ]),
  )
  assert.equal(err.code, 'tool.search-too-costly')
  assert.match(
    err.message,
    new RegExp(`over ${SEARCH_MAX_TOLERANT_CHARS} characters.*exactly as the file has it`),
  )
  assert.equal(await read(ws, 'big.txt'), big, 'nothing was changed')
  // Exact searches and anchors in the same file still work, and report the right lines.
  const r = await call(patch, ctx, [{ path: 'big.txt', search: 'tail', replace: 'TAIL' }])
  const last = SEARCH_MAX_TOLERANT_CHARS / 4 + 3
  assert.equal(r.files[0].changed[0].from_line, last)
  assert.match(r.files[0].changed[0].lines[0], new RegExp(`^${last}:[0-9a-f]+\\|TAIL$`))
  const tail = await call(cat, ctx, 'big.txt', { tail: 1 })
  assert.equal(tail.total_lines, last)
  const anchor = tail.content.split('|')[0]
  await call(patch, ctx, [{ path: 'big.txt', from_anchor: anchor, replace: 'end' }])
  assert.ok((await read(ws, 'big.txt')).endsWith('x y\nend\n'))
})

test('patch never leaves set-id bits on the file it rewrites', async () => {
  const { ws, cat, patch, ctx } = await setup({ 'run.sh': 'echo one\necho two\n' })
  await chmod(join(ws, 'run.sh'), 0o4755)
  const a = anchorsOf((await call(cat, ctx, 'run.sh')).content)
  await call(patch, ctx, { path: 'run.sh', from_anchor: a[0], replace: 'id' })
  assert.equal(await read(ws, 'run.sh'), 'id\necho two\n')
  assert.equal((await stat(join(ws, 'run.sh'))).mode & 0o7777, 0o755)
})
