// src/confinement/beneath.ts over the real openat2(2) of vis_confine.node: what it resolves, what it
// refuses, and the errors it gives.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import {
  closeFd,
  O_PATH,
  openAt2,
  RESOLVE_BENEATH,
  readCapped,
  STRICT,
  Tree,
} from '../../src/confinement/beneath.js'

function tree() {
  const root = mkdtempSync(join(tmpdir(), 'vis-beneath-'))
  const outside = mkdtempSync(join(tmpdir(), 'vis-beneath-out-'))
  writeFileSync(join(outside, 'secret.txt'), 'SECRET\n')
  mkdirSync(join(root, 'd'))
  writeFileSync(join(root, 'd', 'f.txt'), 'inside\n')
  symlinkSync(join(outside, 'secret.txt'), join(root, 'abs-link'))
  symlinkSync(outside, join(root, 'dir-link'))
  symlinkSync('d/f.txt', join(root, 'rel-link'))
  return { root, outside }
}

test('a Tree reads real entries and never follows a link, wherever it is on the path', async () => {
  const { root } = tree()
  const t = Tree.open(root)
  try {
    const f = await t.openFile('d/f.txt')
    assert.ok(f)
    assert.equal((await readCapped(f.fd, 1024)).data.toString(), 'inside\n')
    await closeFd(f.fd)
    // A final link is the link itself: not a file to read, but its target as text.
    assert.equal(await t.openFile('abs-link'), undefined)
    assert.ok((await t.lstat('abs-link'))?.isSymbolicLink())
    assert.match((await t.readlink('abs-link'))!, /secret\.txt$/)
    // A link on the way is an absent entry: nothing below it is reached.
    assert.equal(await t.lstat('dir-link/secret.txt'), undefined)
    assert.equal(await t.openFile('dir-link/secret.txt'), undefined)
    assert.deepEqual(await t.readdir('dir-link'), [])
    assert.equal(await t.openFile('rel-link'), undefined)
    assert.equal(await t.lstat('../x'), undefined)
    assert.deepEqual((await t.readdir('')).map((d) => d.name).sort(), [
      'abs-link',
      'd',
      'dir-link',
      'rel-link',
    ])
  } finally {
    await t.close()
  }
})

test('openAt2: RESOLVE_BENEATH alone follows a link that stays inside and refuses one that leaves, with errno codes', () => {
  const { root } = tree()
  const dir = openAt2(-100, root, O_PATH, 0)
  try {
    const inside = openAt2(dir, 'rel-link', 0, RESOLVE_BENEATH)
    closeFd(inside)
    assert.throws(() => openAt2(dir, 'abs-link', 0, RESOLVE_BENEATH), { code: 'EXDEV' })
    assert.throws(() => openAt2(dir, '../etc', 0, RESOLVE_BENEATH), { code: 'EXDEV' })
    assert.throws(() => openAt2(dir, 'rel-link', 0, STRICT), { code: 'ELOOP' })
    assert.throws(() => openAt2(dir, 'missing', 0, STRICT), { code: 'ENOENT' })
    assert.throws(() => openAt2(987654, 'x', 0, STRICT), { code: 'EBADF' })
  } finally {
    closeFd(dir)
  }
})
