import { randomBytes } from 'node:crypto'
import { copyFile, lstat, mkdir, readdir, readlink, rename, rmdir, symlink, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { inBatches } from './batches.js'
import type { Change } from './changes.js'

// The real paths a change lands on: a rename also removes where it came from.
const touched = (c: Change) => (c.status === 'renamed' ? [c.from!, c.path] : [c.path])

// Files of the real root that changed since the draft began: their ctime (which no program
// can set back, unlike mtime) is not older than the draft's base, read from the same clock.
export async function findConflicts(changes: Change[], real: string, baseAt: number): Promise<string[]> {
  const out = new Set<string>()
  await inBatches(changes.flatMap(touched), async (p) => {
    if (!(await realParents(real, p, false))) return
    const st = await lstat(join(real, p)).catch(() => undefined)
    if (st && st.ctimeMs >= baseAt) out.add(p)
  })
  return [...out].sort()
}

// Whether the real root has an entry at rel, looked up without following a real symlink.
export async function realEntry(real: string, rel: string): Promise<boolean> {
  if (!(await realParents(real, rel, false))) return false
  return (await lstat(join(real, rel)).catch(() => undefined)) !== undefined
}

// Makes every directory from the root down to rel's parent a real directory: a symlink or
// file where the draft has a directory goes (the draft replaced it), so nothing written
// below can follow a link out of the root. false (create off): one is not a directory.
async function realParents(real: string, rel: string, create: boolean): Promise<boolean> {
  let cur = real
  for (const comp of rel.split('/').slice(0, -1)) {
    cur = join(cur, comp)
    const st = await lstat(cur).catch(() => undefined)
    if (st?.isDirectory()) continue
    if (!create) return false
    if (st) await unlink(cur)
    await mkdir(cur).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err
    })
  }
  return true
}

async function atomicPut(c: Change, real: string, parents: Map<string, Promise<boolean>>): Promise<void> {
  // Each directory is made real once, however many files land in it.
  const dir = dirname(c.path)
  let ready = parents.get(dir)
  if (!ready) {
    ready = realParents(real, c.path, true)
    parents.set(dir, ready)
  }
  await ready
  const dest = join(real, c.path)
  const tmp = join(dirname(dest), `.vis-draft-${randomBytes(6).toString('hex')}`)
  try {
    // copyFile gives the copy its source's mode (the draft's).
    if (c.type === 'symlink') await symlink(await readlink(c.source!), tmp)
    else await copyFile(c.source!, tmp)
    // Replaces a file in one step; readers see the old or the new content, never half.
    await rename(tmp, dest).catch(async (err: NodeJS.ErrnoException) => {
      // A directory where the draft has a file: the draft deleted it (what is left of it
      // after the deletions is empty directories).
      if (err.code !== 'EISDIR' && err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err
      await removeEmptyDirs(dest)
      await rename(tmp, dest)
    })
  } catch (err) {
    await unlink(tmp).catch(() => undefined)
    throw err
  }
}

// Lands changes in the real root, one file at a time, each atomically. `skip` holds the
// paths to leave as they are in the real root (conflicts resolved with theirs).
export async function landChanges(changes: Change[], real: string, skip: Set<string>): Promise<string[]> {
  const todo = changes.filter((c) => !touched(c).some((p) => skip.has(p)))
  // Deletions first: a file the draft puts where a real directory was needs it gone. Each
  // path is independent of the others, so the file operations overlap.
  await inBatches(
    todo.filter((c) => c.status === 'deleted'),
    async (c) => {
      if (await realParents(real, c.path, false)) await unlink(join(real, c.path)).catch(ignoreMissing)
    },
  )
  const parents = new Map<string, Promise<boolean>>()
  await inBatches(
    todo.filter((c) => c.status !== 'deleted'),
    async (c) => {
      await atomicPut(c, real, parents)
      if (c.status === 'renamed' && (await realParents(real, c.from!, false)))
        await unlink(join(real, c.from!)).catch(ignoreMissing)
    },
  )
  const landed = todo.map((c) => c.path)
  // Directories the draft emptied by deletions go too, as with git.
  for (const c of changes) {
    if (c.status !== 'deleted' && c.status !== 'renamed') continue
    let d = dirname(join(real, c.status === 'renamed' ? c.from! : c.path))
    while (
      d.length > real.length &&
      (await rmdir(d).then(
        () => true,
        () => false,
      ))
    )
      d = dirname(d)
  }
  return landed
}

// What is left of a directory after the deletions: empty directories only.
async function removeEmptyDirs(dir: string): Promise<void> {
  for (const d of await readdir(dir, { withFileTypes: true })) {
    if (d.isDirectory()) await removeEmptyDirs(join(dir, d.name))
  }
  await rmdir(dir)
}

function ignoreMissing(err: NodeJS.ErrnoException): void {
  if (err.code !== 'ENOENT') throw err
}
