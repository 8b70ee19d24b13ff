import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rename, rm, symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileTools } from '../../src/tools/fs/index.js'
import type { Tool } from '../../src/tools/types.js'
import { call, context, files, guardFor, link, rejection, tempDir } from './helpers.js'

async function setup() {
  const ws = await tempDir()
  const other = await tempDir()
  const outside = await tempDir()
  await files(ws, { 'in.txt': 'inside\n', 'sub/a.txt': 'a\n' })
  await files(other, { 'o.txt': 'other root\n' })
  await files(outside, { 'secret.txt': 'SECRET\n', 'd/secret.txt': 'SECRET\n' })
  const tools = Object.fromEntries(fileTools(guardFor([ws, other])).map((t) => [t.name, t])) as Record<
    string,
    Tool
  >
  return { ws, other, outside, tools, ctx: context([ws, other]) }
}

test('.. escapes and absolute paths elsewhere are denied, naming the allowed roots', async () => {
  const { ws, other, outside, tools, ctx } = await setup()
  for (const p of ['../x', 'sub/../../x', `${outside}/secret.txt`, '/etc/passwd']) {
    const err = await rejection(call(tools.cat!, ctx, p))
    assert.equal(err.code, 'tool.path-denied', p)
    assert.ok(err.message.includes(ws) && err.message.includes(other), err.message)
  }
  // Inside: relative, normalised `..` that stays in, and an absolute path in the second root.
  assert.equal((await call(tools.cat!, ctx, 'sub/../in.txt')).total_lines, 1)
  assert.match((await call(tools.cat!, ctx, join(other, 'o.txt'))).content, /other root/)
  assert.equal((await rejection(call(tools.write!, ctx, '../evil.txt', 'x'))).code, 'tool.path-denied')
  assert.equal((await rejection(call(tools.delete!, ctx, ws))).code, 'tool.path-denied')
})

test('symlinks leading out are refused by every file tool; links inside work', async () => {
  const { ws, outside, tools, ctx } = await setup()
  await link(join(outside, 'secret.txt'), join(ws, 'leak.txt'))
  await link(join(outside, 'd'), join(ws, 'leakdir'))
  await link(join(ws, 'in.txt'), join(ws, 'alias.txt'))
  const denied = async (p: Promise<unknown>) => assert.equal((await rejection(p)).code, 'tool.path-denied')
  await denied(call(tools.cat!, ctx, 'leak.txt'))
  await denied(call(tools.cat!, ctx, 'leakdir/secret.txt'))
  await denied(call(tools.ls!, ctx, 'leakdir'))
  await denied(call(tools.grep!, ctx, 'SECRET', { paths: 'leakdir' }))
  await denied(call(tools.write!, ctx, 'leak.txt', 'pwned'))
  await denied(call(tools.write!, ctx, 'leakdir/new.txt', 'pwned'))
  await denied(call(tools.patch!, ctx, [{ path: 'leak.txt', search: 'SECRET', replace: 'X' }]))
  await denied(call(tools.create_dirs!, ctx, 'leakdir/x/y'))
  await denied(call(tools.exists!, ctx, 'leak.txt'))
  await denied(call(tools.move!, ctx, 'in.txt', 'leakdir/in.txt'))
  assert.equal(await readFile(join(outside, 'secret.txt'), 'utf8'), 'SECRET\n')
  assert.equal(existsSync(join(outside, 'd', 'new.txt')), false)
  assert.equal(existsSync(join(outside, 'd', 'x')), false)
  // grep over the whole workspace does not follow the links out.
  assert.equal((await call(tools.grep!, ctx, 'SECRET')).total, 0)
  // A link that stays inside the roots is fine, and writes land on its target.
  assert.match((await call(tools.cat!, ctx, 'alias.txt')).content, /inside/)
  await call(tools.write!, ctx, 'alias.txt', 'through the link\n')
  assert.equal(await readFile(join(ws, 'in.txt'), 'utf8'), 'through the link\n')
  // Deleting a link removes the link, not what it points at.
  await call(tools.delete!, ctx, 'leak.txt')
  assert.equal(existsSync(join(outside, 'secret.txt')), true)
})

test('a symlink swapped in during calls never lets a read or write escape', async () => {
  const { ws, outside, tools, ctx } = await setup()
  // `d` flips between a real directory and a link to the outside while the
  // tools keep reading and writing through it.
  await files(ws, { 'real/secret.txt': 'harmless\n' })
  await symlink(join(ws, 'real'), join(ws, 'd'))
  let stop = false
  const flipper = (async () => {
    let n = 0
    while (!stop) {
      await rm(join(ws, 'd.tmp'), { force: true })
      await symlink(n++ % 2 ? join(ws, 'real') : join(outside, 'd'), join(ws, 'd.tmp'))
      await rename(join(ws, 'd.tmp'), join(ws, 'd'))
      await new Promise((r) => setImmediate(r))
    }
  })()
  let reads = 0
  let denials = 0
  try {
    for (let i = 0; i < 150; i++) {
      try {
        const r = await call(tools.cat!, ctx, 'd/secret.txt')
        assert.doesNotMatch(r.content, /SECRET/)
        reads++
      } catch (err: any) {
        assert.equal(err.code, 'tool.path-denied')
        denials++
      }
      await call(tools.write!, ctx, `d/w${i}.txt`, 'x').catch((err: any) => {
        assert.equal(err.code, 'tool.path-denied')
      })
      if (i % 5) continue
      const g = await call(tools.grep!, ctx, 'SECRET', { paths: 'd' }).catch((err: any) => {
        assert.equal(err.code, 'tool.path-denied')
        return { total: 0 }
      })
      assert.equal(g.total, 0)
    }
  } finally {
    stop = true
    await flipper
  }
  assert.ok(reads > 0 && denials > 0, `both outcomes should occur (reads ${reads}, denials ${denials})`)
  const leaked = (await import('node:fs')).readdirSync(join(outside, 'd'))
  assert.deepEqual(leaked, ['secret.txt'])
})

test('a parent directory replaced by a link after the check is caught by the handle check', async () => {
  const { ws, outside, ctx } = await setup()
  // The guard resolves lexically first; the move happens before the open, as in a race.
  const guard = guardFor([ws])
  await mkdir(join(ws, 'p'))
  await files(ws, { 'p/f.txt': 'mine\n' })
  const abs = await guard.lexical('p/f.txt', 'cat')
  await rename(join(ws, 'p'), join(ws, 'p.old'))
  await symlink(join(outside, 'd'), join(ws, 'p'))
  await rename(join(outside, 'd', 'secret.txt'), join(outside, 'd', 'f.txt'))
  const err = await rejection(guard.open(abs, 'cat'))
  assert.equal(err.code, 'tool.path-denied')
  assert.match(err.message, /outside the allowed roots/)
  void ctx
})
