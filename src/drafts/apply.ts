import { randomBytes } from 'node:crypto'
import {
  chmod,
  copyFile,
  lstat,
  mkdir,
  readdir,
  readlink,
  rename,
  rmdir,
  symlink,
  unlink,
} from 'node:fs/promises'
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
    const st = await lstat(join(real, p)).catch(() => undefined)
    if (st && st.ctimeMs >= baseAt) out.add(p)
  })
  return [...out].sort()
}

async function atomicPut(c: Change, dest: string): Promise<void> {
  await mkdir(dirname(dest), { recursive: true })
  const tmp = join(dirname(dest), `.vis-draft-${randomBytes(6).toString('hex')}`)
  try {
    if (c.type === 'symlink') await symlink(await readlink(c.source!), tmp)
    else {
      await copyFile(c.source!, tmp)
      await chmod(tmp, c.mode)
    }
    // Replaces a file in one step; readers see the old or the new content, never half.
    await rename(tmp, dest)
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
    (c) => unlink(join(real, c.path)).catch(ignoreMissing),
  )
  await inBatches(
    todo.filter((c) => c.status !== 'deleted'),
    async (c) => {
      const dest = join(real, c.path)
      // A directory where the draft has a file was deleted in the draft.
      const st = await lstat(dest).catch(() => undefined)
      if (st?.isDirectory()) await removeEmptyDirs(dest)
      await atomicPut(c, dest)
      if (c.status === 'renamed') await unlink(join(real, c.from!)).catch(ignoreMissing)
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
