import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { appendFileSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { CAT_MAX_ENTRIES, catTool } from '../../src/tools/fs/cat.js'
import { lineHash } from '../../src/tools/fs/lines.js'
import { setCheckUseHook } from '../../src/util/check-use-hook.js'
import { call, context, files, guardFor, rejection, tempDir } from './helpers.js'

async function setup() {
  const ws = await tempDir()
  const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`)
  await files(ws, { 'a.txt': `${lines.join('\n')}\n`, 'dir/x.py': 'x = 1\n', 'dir/y.txt': 'y' })
  return { ws, cat: catTool(guardFor([ws])), ctx: context([ws]) }
}

test('cat prefixes every line with a content-addressed anchor', async () => {
  const { cat, ctx } = await setup()
  const r = await call(cat, ctx, 'a.txt')
  const rows = r.content.split('\n')
  assert.equal(rows.length, 30)
  assert.equal(rows[0], `1:${lineHash('line 1')}|line 1`)
  assert.equal(rows[29], `30:${lineHash('line 30')}|line 30`)
  assert.equal(r.total_lines, 30)
  assert.equal(r.next_offset, null)
  assert.equal(r.truncated, false)
  assert.equal(r.path, 'a.txt')
  // The same text on another line number keeps its hash.
  assert.equal(lineHash('line 1'), rows[0]!.split('|')[0]!.split(':')[1])
})

test('cat(path, n), cat(path, offset, n) and tail page through a file', async () => {
  const { cat, ctx } = await setup()
  const first = await call(cat, ctx, 'a.txt', 5)
  assert.equal(first.content.split('\n').length, 5)
  assert.equal(first.next_offset, 6)
  const mid = await call(cat, ctx, 'a.txt', first.next_offset, 10)
  assert.match(mid.content.split('\n')[0], /^6:[0-9a-f]{6}\|line 6$/)
  assert.equal(mid.end_line, 15)
  assert.equal(mid.next_offset, 16)
  const tail = await call(cat, ctx, 'a.txt', { tail: 3 })
  assert.deepEqual(
    tail.content.split('\n').map((l: string) => l.split('|')[1]),
    ['line 28', 'line 29', 'line 30'],
  )
  assert.equal(tail.next_offset, null)
  const kw = await call(cat, ctx, 'a.txt', { offset: 29, n: 5 })
  assert.equal(kw.content.split('\n').length, 2)
})

test('cat cuts very long lines and big outputs and says so', async () => {
  const { ws, cat, ctx } = await setup()
  await writeFile(join(ws, 'long.txt'), `${'x'.repeat(5000)}\nshort\n`)
  const r = await call(cat, ctx, 'long.txt')
  assert.equal(r.truncated, true)
  assert.match(r.content, /more chars\]/)
  const big = Array.from({ length: 3000 }, (_, i) => `row ${i} ${'y'.repeat(60)}`).join('\n')
  await writeFile(join(ws, 'big.txt'), big)
  const b = await call(cat, ctx, 'big.txt')
  assert.equal(b.truncated, true)
  assert.ok(b.next_offset > 1 && b.next_offset < 3000)
  assert.ok(b.content.length <= 64 * 1024)
  const next = await call(cat, ctx, 'big.txt', b.next_offset, 1)
  assert.match(next.content, new RegExp(`^${b.next_offset}:`))
})

test('cat of a directory lists it shallowly', async () => {
  const { cat, ctx } = await setup()
  const r = await call(cat, ctx, 'dir')
  assert.equal(r.type, 'directory')
  assert.deepEqual(r.entries, [
    { name: 'x.py', type: 'file' },
    { name: 'y.txt', type: 'file' },
  ])
  assert.equal(r.truncated, false)
})

test('cat of a directory past CAT_MAX_ENTRIES lists that many, sorted, and says it was cut', async () => {
  const { ws, cat, ctx } = await setup()
  await mkdir(join(ws, 'many'))
  const n = CAT_MAX_ENTRIES + 5
  await Promise.all(Array.from({ length: n }, (_, i) => writeFile(join(ws, 'many', `f${i}`), '')))
  const r = await call(cat, ctx, 'many')
  assert.equal(r.truncated, true)
  assert.equal(r.entries.length, CAT_MAX_ENTRIES)
  const names = r.entries.map((e: { name: string }) => e.name)
  assert.deepEqual(names, [...names].sort())
  assert.ok(names.every((x: string) => /^f\d+$/.test(x)))
  assert.match(cat.doc, /up to 1000 entries/)
})

test('cat refuses binary files with their size and type', async () => {
  const { ws, cat, ctx } = await setup()
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    Buffer.alloc(100),
  ])
  await writeFile(join(ws, 'img.png'), png)
  const err = await rejection(call(cat, ctx, 'img.png'))
  assert.equal(err.code, 'tool.binary')
  assert.match(err.message, /PNG image \(108 bytes\)/)
  await writeFile(join(ws, 'blob.dat'), Buffer.from([1, 2, 0, 3]))
  const e2 = await rejection(call(cat, ctx, 'blob.dat'))
  assert.equal(e2.code, 'tool.binary')
  assert.equal(e2.context.size, 4)
})

test('cat refuses a FIFO or device without blocking on it', async () => {
  const { ws, cat, ctx } = await setup()
  execFileSync('mkfifo', [join(ws, 'pipe')])
  assert.equal((await rejection(call(cat, ctx, 'pipe'))).code, 'tool.not-a-file')
})

test('cat reports missing files and bad arguments with stable codes', async () => {
  const { cat, ctx } = await setup()
  assert.equal((await rejection(call(cat, ctx, 'nope.txt'))).code, 'tool.not-found')
  const bad = await rejection(call(cat, ctx, 'a.txt', 'five'))
  assert.equal(bad.code, 'tool.bad-args')
  assert.match(bad.message, /cat\(path, offset=None/)
  assert.equal((await rejection(call(cat, ctx, 'a.txt', { tail: 2, offset: 3 }))).code, 'tool.bad-args')
})

test('cat: a file grown past the 32 MiB limit between its size check and the read is refused, not read whole', async () => {
  const { ws, cat, ctx } = await setup()
  // Test-only hook: right after the size check, the file grows by 33 MiB of text.
  setCheckUseHook((point, rel) => {
    if (point === 'tool.read' && rel === 'a.txt')
      appendFileSync(join(ws, 'a.txt'), Buffer.alloc(33 << 20, 'a'))
  })
  let err: any
  try {
    err = await rejection(call(cat, ctx, 'a.txt'))
  } finally {
    setCheckUseHook(undefined)
  }
  assert.equal(err.code, 'tool.too-large')
  assert.match(err.message, /^cat: 'a\.txt' grew past the 33554432-byte limit while it was read; use grep/)
})
