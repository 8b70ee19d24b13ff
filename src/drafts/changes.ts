import { createHash } from 'node:crypto'
import type { Stats } from 'node:fs'
import { closeFd, readAt, type Tree } from '../confinement/beneath.js'
import { checkpoint } from '../util/check-use-hook.js'
import { VisError } from '../util/errors.js'
import { inBatches } from './batches.js'
import { isOpaqueDir } from './overlay-marks.js'

// What a draft changed, read from its overlay's upper directory against the real root.
// Only the upper directory is walked (the real tree may be huge; a draft's changes are
// small). overlayfs writes a deletion as a whiteout: a character device 0/0 in the upper
// directory. A directory deleted and made again is marked opaque (an xattr, overlay-marks.ts):
// below it nothing of the real root shows through, so every real file below it that the
// draft has no file for is deleted.
//
// Both trees can change while they are read (the sandbox writes the upper directory through
// the overlay; other sessions may write the real root), so each is read through a Tree
// (confinement/beneath.ts): never through a symlink, each file opened once and used by its fd.
export type Change = {
  path: string
  status: 'added' | 'changed' | 'deleted' | 'renamed'
  // renamed: where it came from (identical content)
  from?: string
  type: 'file' | 'symlink'
  mode: number // permission bits in the draft (deleted: in the real root)
  oldMode?: number
}

// A file mode as git prints it.
export const gitMode = (type: Change['type'], m: number) =>
  type === 'symlink' ? '120000' : `100${m.toString(8).padStart(3, '0')}`

const isWhiteout = (st: Stats) => st.isCharacterDevice() && st.rdev === 0

// An entry the scan saw changed kind, or vanished, before the host could read it: the
// draft is being written while it is read. Nothing of it is used.
export function changedWhileRead(path: string, op: string): VisError {
  return new VisError(
    'draft.changed',
    `'${path}' changed while the draft was being read (it is no longer the file it was a moment before); nothing was read from it. Let the blocks that write it finish, then try again`,
    { op, path },
  )
}

// A symlink's target, read as what the scan saw: an entry that is no longer a symlink is
// refused (draft.changed).
export async function readLink(tree: Tree, path: string, op: string): Promise<string> {
  await checkpoint(`${op}.read`, path)
  const target = await tree.readlink(path)
  if (target === undefined) throw changedWhileRead(path, op)
  return target
}

// sha256 and length of a regular file, hashed as it is read in pieces (a draft's file may be
// as big as the disk budget allows: it is never held whole). Never more than the size its
// fstat gave is read: a file grown since then is refused (draft.changed), not followed.
async function hashFile(tree: Tree, path: string, op: string): Promise<{ length: number; sha256: string }> {
  await checkpoint(`${op}.read`, path)
  const f = await tree.openFile(path)
  if (!f) throw changedWhileRead(path, op)
  try {
    const hash = createHash('sha256')
    const buf = Buffer.alloc(1 << 16)
    let pos = 0
    for (;;) {
      const n = await readAt(f.fd, buf, Math.min(buf.length, f.st.size + 1 - pos), pos)
      if (n === 0) break
      hash.update(buf.subarray(0, n))
      pos += n
      if (pos > f.st.size) throw changedWhileRead(path, op)
    }
    return { length: pos, sha256: hash.digest('hex') }
  } finally {
    await closeFd(f.fd)
  }
}

async function sameContent(upper: Tree, real: Tree, path: string, sa: Stats, sb: Stats): Promise<boolean> {
  if (sa.isSymbolicLink() || sb.isSymbolicLink()) {
    if (!(sa.isSymbolicLink() && sb.isSymbolicLink())) return false
    await checkpoint('draft.scan.read', path)
    return (await upper.readlink(path)) === (await real.readlink(path))
  }
  if (sa.size !== sb.size) return false
  await checkpoint('draft.scan.read', path)
  const [a, b] = await Promise.all([upper.openFile(path), real.openFile(path)])
  try {
    if (!a || !b) return false
    const size = 1 << 16
    const ba = Buffer.alloc(size)
    const bb = Buffer.alloc(size)
    for (let pos = 0; ; pos += size) {
      const [ra, rb] = await Promise.all([readAt(a.fd, ba, size, pos), readAt(b.fd, bb, size, pos)])
      if (ra !== rb) return false
      if (ra === 0) return true
      if (!ba.subarray(0, ra).equals(bb.subarray(0, rb))) return false
    }
  } finally {
    await Promise.all([a && closeFd(a.fd), b && closeFd(b.fd)])
  }
}

// Every file below a real directory (a whiteout on a directory deletes all of them).
async function filesBelow(real: Tree, rel: string, out: { path: string; st: Stats }[]): Promise<void> {
  for (const d of await real.readdir(rel)) {
    const p = rel ? `${rel}/${d.name}` : d.name
    const st = await real.lstat(p)
    if (!st) continue
    if (st.isDirectory()) await filesBelow(real, p, out)
    else out.push({ path: p, st })
  }
}

const byPath = (x: Change, y: Change) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0)
const typeOf = (st: Stats): Change['type'] => (st.isSymbolicLink() ? 'symlink' : 'file')
const perm = (st: Stats) => st.mode & 0o7777

// What the scan saw of the real root for one file of the draft (not a whiteout): the real
// entry at its path then (undefined: none). The draft's base record learns from it.
export type Observer = (path: string, real: Stats | undefined) => void

// kind 'blank': the draft began empty, so nothing is deleted relative to the real root;
// what it holds is added, or changes the real file at that path.
export async function scanChanges(
  upper: Tree,
  real: Tree,
  kind: 'copy' | 'blank',
  observe?: Observer,
): Promise<Change[]> {
  try {
    return await scanTrees(upper, real, kind, observe)
  } catch (err) {
    // A tree nested past the system's path limit (PATH_MAX) cannot be compared entry by entry:
    // say so, as a refusal the draft's owner can act on, rather than a raw errno (a 500).
    if ((err as NodeJS.ErrnoException).code === 'ENAMETOOLONG') {
      throw new VisError(
        'draft.path-too-long',
        "the draft holds a path longer than the system's limit (4096 bytes), which cannot be diffed or applied; delete that tree (e.g. shell('rm -r DIR')) or abandon the draft",
        { op: 'draft-scan' },
      )
    }
    throw err
  }
}

async function scanTrees(
  upper: Tree,
  real: Tree,
  kind: 'copy' | 'blank',
  observe?: Observer,
): Promise<Change[]> {
  const out: Change[] = []
  const deleted = (path: string, st: Stats) =>
    out.push({ path, status: 'deleted', type: typeOf(st), mode: perm(st) })
  // Below an opaque directory: the real files there (each deleted unless the draft has a
  // file at its path) and the draft's files there.
  const hidden: { path: string; st: Stats }[] = []
  const present = new Set<string>()
  // lowerOk: real/rel is a real directory (not a symlink). Below a real symlink that the
  // draft replaced by a directory nothing of the real root exists (the Tree never follows
  // one either). opaque: rel is (below) an opaque directory, whose deletions are judged as
  // a whole, not entry by entry.
  const walk = async (rel: string, lowerOk: boolean, opaque: boolean): Promise<void> => {
    const entries = await upper.readdir(rel)
    // Entries are independent: their checks overlap (the result is sorted at the end).
    await inBatches(entries, async (d) => {
      const path = rel ? `${rel}/${d.name}` : d.name
      const st = await upper.lstat(path)
      // Gone (or its directory swapped for a link) since it was listed: not a change of the draft.
      if (!st) return
      const low = lowerOk ? await real.lstat(path) : undefined
      const copy = kind === 'copy'
      if (isWhiteout(st)) {
        if (!copy || !low || opaque) return
        if (low.isDirectory()) {
          const files: { path: string; st: Stats }[] = []
          await filesBelow(real, path, files)
          for (const f of files) deleted(f.path, f.st)
        } else deleted(path, low)
        return
      }
      if (st.isDirectory()) {
        // A real file replaced by a directory: the file is gone.
        if (copy && !opaque && low && !low.isDirectory()) deleted(path, low)
        const opaqueHere = copy && !opaque && low?.isDirectory() === true && opaqueAt(upper, path)
        if (opaqueHere) await filesBelow(real, path, hidden)
        await walk(path, low?.isDirectory() === true, opaque || opaqueHere)
        return
      }
      if (!st.isFile() && !st.isSymbolicLink()) return // sockets, fifos: not content
      if (opaque) present.add(path)
      observe?.(path, low)
      if (low?.isDirectory()) {
        if (copy && !opaque) {
          const files: { path: string; st: Stats }[] = []
          await filesBelow(real, path, files)
          for (const f of files) deleted(f.path, f.st)
        }
        out.push({ path, status: 'added', type: typeOf(st), mode: perm(st) })
        return
      }
      if (!low) {
        out.push({ path, status: 'added', type: typeOf(st), mode: perm(st) })
        return
      }
      const same = await sameContent(upper, real, path, st, low)
      if (same && perm(st) === perm(low)) return // copied up (touched, chmod back) but equal
      out.push({
        path,
        status: 'changed',
        type: typeOf(st),
        mode: perm(st),
        ...(perm(st) !== perm(low) ? { oldMode: perm(low) } : {}),
      })
    })
  }
  await walk('', true, false)
  for (const f of hidden) if (!present.has(f.path)) deleted(f.path, f.st)
  return (await detectRenames(out, upper, real)).sort(byPath)
}

// The opaque marker of a directory of the upper tree, read from the entry itself below its
// parent's fd (a directory swapped for a link has no marker: it is not opaque).
function opaqueAt(upper: Tree, path: string): boolean {
  const p = upper.parent(path)
  if (!p) return false
  try {
    return isOpaqueDir(`/proc/self/fd/${p.dir}/${p.name}`)
  } finally {
    void closeFd(p.dir)
  }
}

// sha256 of an entry as the scan typed it; undefined when it changed kind since.
export async function digest(tree: Tree, path: string, type: Change['type']): Promise<string | undefined> {
  try {
    if (type === 'symlink') {
      const target = Buffer.from(await readLink(tree, path, 'draft.scan'))
      return `${type}:${target.length}:${createHash('sha256').update(`link:${target}`).digest('hex')}`
    }
    const { length, sha256 } = await hashFile(tree, path, 'draft.scan')
    return `${type}:${length}:${sha256}`
  } catch (err) {
    if (err instanceof VisError && err.code === 'draft.changed') return undefined
    throw err
  }
}

// A deleted file and an added file with identical content (and type) are one rename.
async function detectRenames(changes: Change[], upper: Tree, real: Tree): Promise<Change[]> {
  const added = changes.filter((c) => c.status === 'added')
  const deleted = changes.filter((c) => c.status === 'deleted')
  if (added.length === 0 || deleted.length === 0) return changes
  const byHash = new Map<string, Change[]>()
  for (const d of deleted) {
    const h = await digest(real, d.path, d.type)
    if (h !== undefined) byHash.set(h, [...(byHash.get(h) ?? []), d])
  }
  const gone = new Set<Change>()
  for (const a of added) {
    const h = await digest(upper, a.path, a.type)
    const from = h === undefined ? undefined : byHash.get(h)?.shift()
    if (!from) continue
    gone.add(from)
    a.status = 'renamed'
    a.from = from.path
    if (from.mode !== a.mode) a.oldMode = from.mode
  }
  return changes.filter((c) => !gone.has(c))
}
