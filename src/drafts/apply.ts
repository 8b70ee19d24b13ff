import { randomBytes } from 'node:crypto'
import { constants as C, type Stats } from 'node:fs'
import { mkdir, open, readdir, rename, rmdir, symlink, unlink } from 'node:fs/promises'
import { basename } from 'node:path'
import { atFd, closeFd, errCode, O_PATH, openAt2, readAt, STRICT, type Tree } from '../confinement/beneath.js'
import { checkpoint } from '../util/check-use-hook.js'
import { isVisError, VisError } from '../util/errors.js'
import { inBatches } from './batches.js'
import { type Change, changedWhileRead } from './changes.js'

// Landing a draft writes into the real root, which may change under it (other sessions work
// there; the draft's own upper directory is written through the overlay). Every write goes to
// a name below a directory fd that was reached without following any link (confinement/beneath.ts),
// and every source is read from an fd opened the same way: a symlink swapped in anywhere is
// neither followed to read nor to write.

// The real paths a change lands on: a rename also removes where it came from.
const touched = (c: Change) => (c.status === 'renamed' ? [c.from!, c.path] : [c.path])

// Files of the real root that changed since the draft began: their ctime (which no program
// can set back, unlike mtime) is not older than the draft's base, read from the same clock.
export async function findConflicts(changes: Change[], real: Tree, baseAt: number): Promise<string[]> {
  const out = new Set<string>()
  await inBatches(changes.flatMap(touched), async (p) => {
    const st = await real.lstat(p)
    if (st && st.ctimeMs >= baseAt) out.add(p)
  })
  return [...out].sort()
}

// Whether the real root has an entry at rel, looked up without following a real symlink.
export async function realEntry(real: Tree, rel: string): Promise<boolean> {
  return (await real.lstat(rel)) !== undefined
}

const TRIES = 4

// A directory fd for rel's parent, every directory from the root down made a real one: a
// symlink or file where the draft has a directory goes (the draft replaced it), so nothing
// written below can follow a link out of the root. The caller closes it.
async function realParents(real: Tree, rel: string): Promise<number> {
  let cur = openAt2(real.fd, '', O_PATH | C.O_DIRECTORY, STRICT)
  try {
    for (const comp of rel.split('/').slice(0, -1)) {
      for (let tries = 0; ; tries++) {
        if (tries === TRIES) throw changedWhileRead(rel, 'draft.apply')
        try {
          const next = openAt2(cur, comp, O_PATH | C.O_DIRECTORY | C.O_NOFOLLOW, STRICT)
          await closeFd(cur)
          cur = next
          break
        } catch (err) {
          const code = errCode(err)
          if (code === 'ENOTDIR' || code === 'ELOOP')
            await unlink(atFd(cur, comp)).catch(ignore('ENOENT', 'EISDIR'))
          else if (code !== 'ENOENT') throw err
          await mkdir(atFd(cur, comp)).catch(ignore('EEXIST'))
        }
      }
    }
    return cur
  } catch (err) {
    await closeFd(cur)
    throw err
  }
}

async function copyInto(src: number, dir: number, name: string, mode: number): Promise<void> {
  // O_EXCL: the name is new, never an existing file or a link to follow.
  const out = await open(atFd(dir, name), C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600)
  try {
    const buf = Buffer.alloc(1 << 16)
    for (let pos = 0; ; ) {
      const n = await readAt(src, buf, buf.length, pos)
      if (n === 0) break
      await out.write(buf, 0, n)
      pos += n
    }
    // The draft's permission bits, never set-id ones: the real root is outside the jail's
    // nosuid mounts.
    await out.chmod(mode & 0o777)
  } finally {
    await out.close()
  }
}

async function atomicPut(c: Change, upper: Tree, real: Tree): Promise<void> {
  // The source first: a draft entry that changed kind since the scan lands nothing, not even
  // the directories above it.
  await checkpoint('draft.apply.read', c.path)
  let target: string | undefined
  let src: { fd: number; st: Stats } | undefined
  if (c.type === 'symlink') target = await upper.readlink(c.path)
  else src = await upper.openFile(c.path)
  if (target === undefined && src === undefined) throw changedWhileRead(c.path, 'draft.apply')
  let dir: number | undefined
  const name = basename(c.path)
  const tmp = `.vis-draft-${randomBytes(6).toString('hex')}`
  let made = false
  try {
    dir = await realParents(real, c.path)
    made = true
    if (src) await copyInto(src.fd, dir, tmp, src.st.mode)
    else await symlink(target!, atFd(dir, tmp))
    const d = dir
    // Replaces a file in one step; readers see the old or the new content, never half.
    await rename(atFd(d, tmp), atFd(d, name)).catch(async (err: NodeJS.ErrnoException) => {
      // A directory where the draft has a file: the draft deleted it (what is left of it
      // after the deletions is empty directories).
      if (err.code !== 'EISDIR' && err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err
      await removeEmptyDirs(d, name)
      await rename(atFd(d, tmp), atFd(d, name))
    })
    made = false
  } finally {
    if (made && dir !== undefined) await unlink(atFd(dir, tmp)).catch(() => undefined)
    if (dir !== undefined) await closeFd(dir)
    if (src) await closeFd(src.fd)
  }
}

// Removes the entry itself (never what a symlink there points at).
async function removeAt(real: Tree, rel: string): Promise<void> {
  const p = real.parent(rel)
  if (!p) return
  try {
    await unlink(atFd(p.dir, p.name)).catch(ignore('ENOENT'))
  } finally {
    await closeFd(p.dir)
  }
}

// Lands changes in the real root, one file at a time, each atomically. `skip` holds the
// paths to leave as they are in the real root (conflicts resolved with theirs). A change
// that cannot land (the draft or the real root changed under it) stops the apply with a
// VisError naming the path relative to the root, and leaves no temporary file behind.
export async function landChanges(
  changes: Change[],
  upper: Tree,
  real: Tree,
  skip: Set<string>,
): Promise<string[]> {
  const todo = changes.filter((c) => !touched(c).some((p) => skip.has(p)))
  const landed: string[] = []
  const each = (c: Change, fn: () => Promise<void>) =>
    fn().then(
      () => void landed.push(c.path),
      (err) => {
        throw landingFailed(err, c.path, landed)
      },
    )
  // Deletions first: a file the draft puts where a real directory was needs it gone. Each
  // path is independent of the others, so the file operations overlap.
  await inBatches(
    todo.filter((c) => c.status === 'deleted'),
    (c) => each(c, () => removeAt(real, c.path)),
  )
  await inBatches(
    todo.filter((c) => c.status !== 'deleted'),
    (c) =>
      each(c, async () => {
        await atomicPut(c, upper, real)
        if (c.status === 'renamed') await removeAt(real, c.from!)
      }),
  )
  // Directories the draft emptied by deletions go too, as with git.
  for (const c of changes) {
    if (c.status !== 'deleted' && c.status !== 'renamed') continue
    const rel = c.status === 'renamed' ? c.from! : c.path
    for (let d = parentOf(rel); d !== ''; d = parentOf(d)) {
      const p = real.parent(d)
      if (!p) break
      const gone = await rmdir(atFd(p.dir, p.name)).then(
        () => true,
        () => false,
      )
      await closeFd(p.dir)
      if (!gone) break
    }
  }
  return todo.map((c) => c.path)
}

const parentOf = (rel: string) => {
  const i = rel.lastIndexOf('/')
  return i < 0 ? '' : rel.slice(0, i)
}

// What is left of a directory after the deletions: empty directories only.
async function removeEmptyDirs(parent: number, name: string): Promise<void> {
  const fd = openAt2(parent, name, C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW, STRICT)
  try {
    for (const d of await readdir(atFd(fd), { withFileTypes: true })) {
      if (d.isDirectory()) await removeEmptyDirs(fd, d.name)
    }
  } finally {
    await closeFd(fd)
  }
  await rmdir(atFd(parent, name))
}

function landingFailed(err: unknown, path: string, landed: string[]): VisError {
  const ctx = { op: 'draft.apply', path, landed: [...landed] }
  const done = landed.length
    ? ` ${landed.length} file(s) had landed before it (listed in the error's context); apply again with ours to land the rest, or abandon the draft`
    : ' nothing had landed yet'
  if (isVisError(err)) return new VisError(err.code, `${err.message}.${done}`, { ...err.context, ...ctx })
  const code = errCode(err) ?? 'error'
  return new VisError(
    'draft.apply-failed',
    `'${path}' could not be landed in the real root (${code}): the real root or the draft changed under it;${done}`,
    ctx,
    { cause: err },
  )
}

function ignore(...codes: string[]) {
  return (err: NodeJS.ErrnoException) => {
    if (!codes.includes(err.code ?? '')) throw err
  }
}
