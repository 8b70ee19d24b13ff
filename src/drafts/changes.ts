import { createHash } from 'node:crypto'
import type { Stats } from 'node:fs'
import { lstat, open, readdir, readFile, readlink } from 'node:fs/promises'
import { join } from 'node:path'
import { inBatches } from './batches.js'
import { isOpaqueDir } from './overlay-marks.js'

// What a draft changed, read from its overlay's upper directory against the real root.
// Only the upper directory is walked (the real tree may be huge; a draft's changes are
// small). overlayfs writes a deletion as a whiteout: a character device 0/0 in the upper
// directory. A directory deleted and made again is marked opaque (an xattr, overlay-marks.ts):
// below it nothing of the real root shows through, so every real file below it that the
// draft has no file for is deleted.
export type Change = {
  path: string
  status: 'added' | 'changed' | 'deleted' | 'renamed'
  // renamed: where it came from (identical content)
  from?: string
  type: 'file' | 'symlink'
  mode: number // permission bits in the draft (deleted: in the real root)
  oldMode?: number
  // The file in the upper directory (absent for deletions).
  source?: string
}

// A file mode as git prints it.
export const gitMode = (type: Change['type'], m: number) =>
  type === 'symlink' ? '120000' : `100${m.toString(8).padStart(3, '0')}`

const isWhiteout = (st: Stats) => st.isCharacterDevice() && st.rdev === 0

async function lstatOrUndefined(p: string): Promise<Stats | undefined> {
  return lstat(p).catch(() => undefined)
}

async function sameContent(a: string, b: string, sa: Stats, sb: Stats): Promise<boolean> {
  if (sa.isSymbolicLink() || sb.isSymbolicLink()) {
    return sa.isSymbolicLink() && sb.isSymbolicLink() && (await readlink(a)) === (await readlink(b))
  }
  if (sa.size !== sb.size) return false
  const [ha, hb] = await Promise.all([open(a), open(b)])
  try {
    const size = 1 << 16
    const ba = Buffer.alloc(size)
    const bb = Buffer.alloc(size)
    for (let pos = 0; ; pos += size) {
      const [ra, rb] = await Promise.all([ha.read(ba, 0, size, pos), hb.read(bb, 0, size, pos)])
      if (ra.bytesRead !== rb.bytesRead) return false
      if (ra.bytesRead === 0) return true
      if (!ba.subarray(0, ra.bytesRead).equals(bb.subarray(0, rb.bytesRead))) return false
    }
  } finally {
    await Promise.all([ha.close(), hb.close()])
  }
}

// Every file below a real directory (a whiteout on a directory deletes all of them).
async function filesBelow(dir: string, rel: string, out: { path: string; st: Stats }[]): Promise<void> {
  for (const d of await readdir(join(dir, rel), { withFileTypes: true }).catch(() => [])) {
    const p = rel ? `${rel}/${d.name}` : d.name
    const st = await lstat(join(dir, p))
    if (st.isDirectory()) await filesBelow(dir, p, out)
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
  upper: string,
  real: string,
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
  // draft replaced by a directory nothing of the real root exists: looking there would
  // follow the link out of the root. opaque: rel is (below) an opaque directory, whose
  // deletions are judged as a whole, not entry by entry.
  const walk = async (rel: string, lowerOk: boolean, opaque: boolean): Promise<void> => {
    const entries = await readdir(join(upper, rel), { withFileTypes: true })
    // Entries are independent: their checks overlap (the result is sorted at the end).
    await inBatches(entries, async (d) => {
      const path = rel ? `${rel}/${d.name}` : d.name
      const up = join(upper, path)
      const st = await lstat(up)
      const low = lowerOk ? await lstatOrUndefined(join(real, path)) : undefined
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
        const opaqueHere = copy && !opaque && low?.isDirectory() === true && isOpaqueDir(up)
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
        out.push({ path, status: 'added', type: typeOf(st), mode: perm(st), source: up })
        return
      }
      if (!low) {
        out.push({ path, status: 'added', type: typeOf(st), mode: perm(st), source: up })
        return
      }
      const same = await sameContent(up, join(real, path), st, low)
      if (same && perm(st) === perm(low)) return // copied up (touched, chmod back) but equal
      out.push({
        path,
        status: 'changed',
        type: typeOf(st),
        mode: perm(st),
        ...(perm(st) !== perm(low) ? { oldMode: perm(low) } : {}),
        source: up,
      })
    })
  }
  await walk('', true, false)
  for (const f of hidden) if (!present.has(f.path)) deleted(f.path, f.st)
  return (await detectRenames(out, real)).sort(byPath)
}

async function digest(p: string, st: Stats): Promise<string> {
  const data = st.isSymbolicLink() ? Buffer.from(`link:${await readlink(p)}`) : await readFile(p)
  return createHash('sha256').update(data).digest('hex')
}

// A deleted file and an added file with identical content (and type) are one rename.
async function detectRenames(changes: Change[], real: string): Promise<Change[]> {
  const added = changes.filter((c) => c.status === 'added')
  const deleted = changes.filter((c) => c.status === 'deleted')
  if (added.length === 0 || deleted.length === 0) return changes
  const byHash = new Map<string, Change[]>()
  for (const d of deleted) {
    const p = join(real, d.path)
    const st = await lstat(p)
    const h = `${d.type}:${st.size}:${await digest(p, st)}`
    byHash.set(h, [...(byHash.get(h) ?? []), d])
  }
  const gone = new Set<Change>()
  for (const a of added) {
    const st = await lstat(a.source!)
    const candidates = byHash.get(`${a.type}:${st.size}:${await digest(a.source!, st)}`)
    const from = candidates?.shift()
    if (!from) continue
    gone.add(from)
    a.status = 'renamed'
    a.from = from.path
    if (from.mode !== a.mode) a.oldMode = from.mode
  }
  return changes.filter((c) => !gone.has(c))
}
