// The walk behind the disk budget (src/sessions/disk-usage.ts), on real files: what it counts,
// what it never follows, and that a reused directory listing never hides a new entry.
import assert from 'node:assert/strict'
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { TreeUsage } from '../../src/sessions/disk-usage.js'

const made: string[] = []
const dir = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix))
  made.push(d)
  return d
}
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})
const MIB = 1 << 20

test('allocated blocks and apparent size; hard links once; symlinks and what they point to never', async () => {
  const root = dir('vis-usage-')
  const outside = dir('vis-usage-outside-')
  writeFileSync(join(outside, 'big'), Buffer.alloc(4 * MIB, 1))
  const u = new TreeUsage()
  const empty = await u.measure([root])
  mkdirSync(join(root, 'a', 'b'), { recursive: true })
  writeFileSync(join(root, 'a', 'b', 'data'), Buffer.alloc(2 * MIB, 1))
  linkSync(join(root, 'a', 'b', 'data'), join(root, 'a', 'hard'))
  symlinkSync(join(outside, 'big'), join(root, 'link-file'))
  symlinkSync(outside, join(root, 'link-dir'))
  const full = await u.measure([root])
  const grew = full.allocated - empty.allocated
  // 2 MiB of data once (the hard link is the same inode), plus two directories' blocks.
  assert.ok(grew >= 2 * MIB && grew < 2 * MIB + 64 * 1024, `grew ${grew}`)
  assert.ok(full.apparent - empty.apparent >= 2 * MIB && full.apparent - empty.apparent < 3 * MIB)
  // The same path named twice, or a root inside another, is the same tree: counted once.
  const twice = await new TreeUsage().measure([root, root])
  assert.equal(twice.allocated, full.allocated)
})

test('a sparse file counts the blocks it holds, not its size', async () => {
  const root = dir('vis-usage-sparse-')
  const u = new TreeUsage()
  const before = await u.measure([root])
  writeFileSync(join(root, 'sparse'), '')
  const { truncateSync } = await import('node:fs')
  truncateSync(join(root, 'sparse'), 64 * MIB)
  const after = await u.measure([root])
  assert.ok(after.apparent - before.apparent >= 64 * MIB)
  assert.ok(after.allocated - before.allocated < MIB, `allocated ${after.allocated - before.allocated}`)
})

test('a cached listing is read again when its directory changes, also within one clock tick', async () => {
  const root = dir('vis-usage-cache-')
  mkdirSync(join(root, 'd'))
  // The directory looks old: its listing is cached after the first pass.
  const old = new Date(Date.now() - 60_000)
  utimesSync(join(root, 'd'), old, old)
  const u = new TreeUsage()
  const first = await u.measure([root])
  writeFileSync(join(root, 'd', 'new'), Buffer.alloc(MIB, 1))
  const second = await u.measure([root])
  assert.ok(second.allocated - first.allocated >= MIB, 'the new file counts')
  // A file written into a freshly changed directory (mtime "now") right after a pass: the
  // listing taken while the directory was that fresh is not trusted, so it is found.
  writeFileSync(join(root, 'd', 'newer'), Buffer.alloc(MIB, 1))
  await u.measure([root])
  writeFileSync(join(root, 'd', 'newest'), Buffer.alloc(MIB, 1))
  const third = await u.measure([root])
  assert.ok(third.allocated - second.allocated >= 2 * MIB, 'both later files count')
  // A deleted file stops counting at once.
  rmSync(join(root, 'd', 'new'))
  const fourth = await u.measure([root])
  assert.ok(third.allocated - fourth.allocated >= MIB)
})

test('a big tree is walked in slices: the event loop keeps turning', async () => {
  const root = dir('vis-usage-big-')
  for (let d = 0; d < 8; d++) {
    mkdirSync(join(root, `d${d}`))
    for (let f = 0; f < 500; f++) writeFileSync(join(root, `d${d}`, `f${f}`), 'x')
  }
  const u = new TreeUsage()
  let ticks = 0
  const timer = setInterval(() => ticks++, 1)
  const first = await u.measure([root])
  const second = await u.measure([root])
  clearInterval(timer)
  assert.equal(first.entries, 4009)
  assert.equal(second.allocated, first.allocated)
  // A walk that held the loop for all of its time would let no 1 ms timer fire; one that
  // was quick enough to need no slice proves nothing either way.
  if (first.ms + second.ms > 20) assert.ok(ticks > 0, 'timers ran while the tree was walked')
})
