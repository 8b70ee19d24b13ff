import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { chmod, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { mutateTools } from '../../src/tools/fs/mutate.js'
import type { Tool } from '../../src/tools/types.js'
import { call, context, files, guardFor, rejection, tempDir } from './helpers.js'

async function setup() {
  const ws = await tempDir()
  await files(ws, { 'a.txt': 'a\n', 'dir/b.txt': 'b\n', 'tree/x/y/z.txt': 'z\n' })
  const t = Object.fromEntries(mutateTools(guardFor([ws])).map((x) => [x.name, x])) as Record<string, Tool>
  return { ws, t, ctx: context([ws]) }
}

test('write creates files with their parents and replaces existing ones keeping the mode', async () => {
  const { ws, t, ctx } = await setup()
  const r = await call(t.write!, ctx, 'new/deep/file.txt', 'hello\n')
  assert.deepEqual(r, { path: 'new/deep/file.txt', bytes: 6, created: true })
  assert.equal(await readFile(join(ws, 'new/deep/file.txt'), 'utf8'), 'hello\n')
  await chmod(join(ws, 'a.txt'), 0o600)
  const again = await call(t.write!, ctx, 'a.txt', 'replaced')
  assert.equal(again.created, false)
  assert.equal(await readFile(join(ws, 'a.txt'), 'utf8'), 'replaced')
  assert.equal((await stat(join(ws, 'a.txt'))).mode & 0o777, 0o600)
  assert.equal((await rejection(call(t.write!, ctx, 'dir', 'x'))).code, 'tool.is-directory')
})

test('move renames, refuses to clobber unless asked', async () => {
  const { ws, t, ctx } = await setup()
  assert.deepEqual(await call(t.move!, ctx, 'a.txt', 'dir/a2.txt'), { src: 'a.txt', dst: 'dir/a2.txt' })
  assert.equal(existsSync(join(ws, 'a.txt')), false)
  const clash = await rejection(call(t.move!, ctx, 'dir/a2.txt', 'dir/b.txt'))
  assert.equal(clash.code, 'tool.exists')
  assert.match(clash.message, /overwrite=True/)
  await call(t.move!, ctx, 'dir/a2.txt', 'dir/b.txt', { overwrite: true })
  assert.equal(await readFile(join(ws, 'dir/b.txt'), 'utf8'), 'a\n')
  assert.equal((await rejection(call(t.move!, ctx, 'gone.txt', 'x.txt'))).code, 'tool.not-found')
})

test('delete removes files, empty directories, and trees only when recursive', async () => {
  const { ws, t, ctx } = await setup()
  assert.deepEqual(await call(t.delete!, ctx, 'a.txt'), { path: 'a.txt', deleted: 'file' })
  const full = await rejection(call(t.delete!, ctx, 'tree'))
  assert.equal(full.code, 'tool.not-empty')
  assert.match(full.message, /recursive=True/)
  await call(t.delete!, ctx, 'tree', { recursive: true })
  assert.equal(existsSync(join(ws, 'tree')), false)
  assert.equal((await rejection(call(t.delete!, ctx, 'a.txt'))).code, 'tool.not-found')
})

test('create_dirs and exists', async () => {
  const { ws, t, ctx } = await setup()
  assert.deepEqual(await call(t.create_dirs!, ctx, 'p/q/r'), { path: 'p/q/r', created: true })
  assert.deepEqual(await call(t.create_dirs!, ctx, 'p/q'), { path: 'p/q', created: false })
  assert.ok((await stat(join(ws, 'p/q/r'))).isDirectory())
  assert.equal((await rejection(call(t.create_dirs!, ctx, 'a.txt/sub'))).code, 'tool.not-a-directory')
  assert.deepEqual(await call(t.exists!, ctx, 'dir/b.txt'), { path: 'dir/b.txt', exists: true, type: 'file' })
  assert.deepEqual(await call(t.exists!, ctx, 'p'), { path: 'p', exists: true, type: 'directory' })
  assert.deepEqual(await call(t.exists!, ctx, 'nope'), { path: 'nope', exists: false, type: null })
})

test('write never leaves set-id bits: replacing a set-uid/set-gid file keeps its permission bits only', async () => {
  const { ws, t, ctx } = await setup()
  // The host may run as root, where the kernel keeps set-id bits on a write: the model's
  // content in a set-uid file would be a set-uid program on the host.
  await chmod(join(ws, 'a.txt'), 0o6755)
  assert.equal((await stat(join(ws, 'a.txt'))).mode & 0o7777, 0o6755, 'the set-up holds')
  await call(t.write!, ctx, 'a.txt', '#!/bin/sh\nid\n')
  assert.equal(await readFile(join(ws, 'a.txt'), 'utf8'), '#!/bin/sh\nid\n')
  assert.equal((await stat(join(ws, 'a.txt'))).mode & 0o7777, 0o755)
})
