import { spawn } from 'node:child_process'
import {
  constants as C,
  chmodSync,
  closeSync,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  type Stats,
} from 'node:fs'
import { O_PATH } from '../confinement/beneath.js'
import { hostProgramPath } from '../util/host-programs.js'

// How long one synchronous stretch of a walk may hold the event loop before it yields.
const SLICE_MS = 4
// Entries between two looks at the clock.
const CLOCK_EVERY = 128
// A listing is reused only when the directory had not changed for this long when it was read:
// directory timestamps come from a coarse clock (a few ms), so a change right after a listing
// could leave the mtime as it was ("racy" listings are read again every pass).
const QUIET_MS = 50

// Below this many bytes of path a directory is walked here; deeper, `du` measures it whole:
// lstat of a path past PATH_MAX (4096) fails, and a tree nested deeper than that would go
// unmeasured. du walks with openat, so depth does not stop it; it is given the directory as
// an open descriptor, so neither the path's length nor its bytes matter.
const DEEP_PATH_BYTES = 2048
const DU_TIMEOUT_MS = 30_000

// What the roots hold: allocated bytes (st_blocks * 512, what the disk gives up: a sparse
// file counts what it really holds, a 1-byte file its whole block) and apparent bytes
// (st_size), each hard-linked inode once.
// `unreadable`: directories the walk could not list or look into even after restoring their
// owner's bits (see repair): what they hold is unknown, and the budget counts that as over.
export type Usage = { allocated: number; apparent: number; entries: number; ms: number; unreadable: number }

type Listing = { ino: number; mtimeMs: number; ctimeMs: number; names: Buffer[]; seen: number }

const noEntry = { throwIfNoEntry: false } as const

// Paths are bytes: a name that is not UTF-8 (`open(b'big\\xff', 'wb')`) must be measured too,
// and a string would turn it into U+FFFD and miss the real file.
const SLASH = Buffer.from('/')
const join = (dir: Buffer, name: Buffer) => Buffer.concat([dir, SLASH, name])
// Listings are cached by the directory's bytes, as text no two paths share.
const key = (p: Buffer) => p.toString('latin1')

const denied = (err: unknown) => (err as NodeJS.ErrnoException).code === 'EACCES'

// An entry's stats; undefined when it is gone mid-walk, 'denied' when its directory may not
// be searched (EACCES).
function lstatOr(path: Buffer): Stats | 'denied' | undefined {
  try {
    return lstatSync(path, noEntry)
  } catch (err) {
    return denied(err) ? 'denied' : undefined
  }
}

// The sandbox owns what it creates in its roots (its uid maps to the host user) and may chmod
// a directory to write+search only (0o300) or read-only: it still fills it, but the host
// user's walk could neither list it nor look into it. The owner may always chmod, so the walk
// gives the directory its owner's read and search bits back (SECURITY.md, Disk budget). The
// directory is opened O_PATH without following a link and changed through that descriptor,
// only when it is still the directory the walk saw (device and inode) and the host user's.
// false: it could not be repaired (another owner, gone, swapped), and stays unreadable.
function repair(dir: Buffer, st: Stats): boolean {
  if (st.uid !== process.getuid?.()) return false
  let fd: number | undefined
  try {
    fd = openSync(dir, O_PATH | C.O_NOFOLLOW | C.O_DIRECTORY)
    const now = fstatSync(fd)
    if (now.dev !== st.dev || now.ino !== st.ino || now.uid !== st.uid) return false
    chmodSync(`/proc/self/fd/${fd}`, (now.mode & 0o7777) | 0o500)
    return true
  } catch {
    return false
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

// Measures trees of directories without following symlinks or leaving them. Every entry is
// lstat-ed on every pass (a file's size changes without touching its directory); a
// directory's list of names is read again only when the directory itself changed. The walk
// runs in short synchronous slices and yields between them, so a big tree costs time, not
// the host's responsiveness.
export class TreeUsage {
  private readonly listings = new Map<string, Listing>()
  private pass = 0

  async measure(paths: readonly string[]): Promise<Usage> {
    const t0 = performance.now()
    const pass = ++this.pass
    const seenInodes = new Set<string>()
    let allocated = 0
    let apparent = 0
    let entries = 0
    let unreadable = 0
    let sliceStart = t0
    const count = (st: Stats) => {
      entries++
      if (st.nlink > 1 && !st.isDirectory()) {
        const key = `${st.dev}:${st.ino}`
        if (seenInodes.has(key)) return
        seenInodes.add(key)
      }
      allocated += st.blocks * 512
      apparent += st.size
    }
    const stack: Array<{ path: Buffer; st: Stats }> = []
    for (const text of new Set(paths)) {
      const p = Buffer.from(text)
      const st = lstatOr(p)
      if (st === 'denied' || st === undefined) continue
      if (st.isDirectory()) stack.push({ path: p, st })
      else count(st)
    }
    const deep: Buffer[] = []
    while (stack.length > 0) {
      const { path, st } = stack.pop()!
      if (path.length > DEEP_PATH_BYTES) {
        deep.push(path)
        continue
      }
      count(st)
      const names = this.names(path, st, pass)
      if (names === undefined) {
        unreadable++
        continue
      }
      let repaired = false
      for (const name of names) {
        if (entries % CLOCK_EVERY === 0 && performance.now() - sliceStart > SLICE_MS) {
          await new Promise((resolve) => setImmediate(resolve))
          sliceStart = performance.now()
        }
        const child = join(path, name)
        let cst = lstatOr(child)
        // Listable but not searchable (no x bit): repaired once for the whole directory.
        if (cst === 'denied' && !repaired) {
          repaired = true
          if (repair(path, st)) cst = lstatOr(child)
        }
        if (cst === 'denied') {
          unreadable++
          break
        }
        if (cst === undefined) continue
        if (cst.isDirectory()) stack.push({ path: child, st: cst })
        else count(cst)
      }
    }
    for (const dir of deep) {
      const u = await duTree(dir)
      allocated += u.allocated
      apparent += u.apparent
      entries += u.entries
      unreadable += u.unreadable
    }
    // Directories gone since (or never reached again) are forgotten.
    for (const [dir, l] of this.listings) if (l.seen !== pass) this.listings.delete(dir)
    return { allocated, apparent, entries, ms: performance.now() - t0, unreadable }
  }

  // A directory's names; undefined when it cannot be listed even after repair.
  private names(dir: Buffer, st: Stats, pass: number): Buffer[] | undefined {
    const cached = this.listings.get(key(dir))
    if (cached && cached.ino === st.ino && cached.mtimeMs === st.mtimeMs && cached.ctimeMs === st.ctimeMs) {
      cached.seen = pass
      return cached.names
    }
    let names: Buffer[]
    const readAt = Date.now()
    try {
      names = readdirSync(dir, { encoding: 'buffer' })
    } catch (err) {
      if (!denied(err)) return [] // gone mid-walk
      if (!repair(dir, st)) return undefined
      try {
        names = readdirSync(dir, { encoding: 'buffer' })
      } catch (again) {
        return denied(again) ? undefined : []
      }
    }
    if (readAt - Math.max(st.mtimeMs, st.ctimeMs) > QUIET_MS) {
      this.listings.set(key(dir), {
        ino: st.ino,
        mtimeMs: st.mtimeMs,
        ctimeMs: st.ctimeMs,
        names,
        seen: pass,
      })
    } else this.listings.delete(key(dir))
    return names
  }
}

// One directory tree measured by du through a descriptor (see DEEP_PATH_BYTES). A tree du
// cannot read whole (it reports an error: a directory below it unreadable) is unreadable.
async function duTree(
  dir: Buffer,
): Promise<{ allocated: number; apparent: number; entries: number; unreadable: number }> {
  let fd: number
  try {
    fd = openSync(dir, 'r')
  } catch (err) {
    return { allocated: 0, apparent: 0, entries: 0, unreadable: denied(err) ? 1 : 0 }
  }
  let failed = false
  const du = hostProgramPath('du')
  const run = (flags: string[]) =>
    new Promise<number>((resolve) => {
      if (!du) {
        failed = true
        return resolve(0)
      }
      // The directory is the child's fd 3.
      const child = spawn(du, ['-s', '-x', '-D', ...flags, '/proc/self/fd/3'], {
        stdio: ['ignore', 'pipe', 'ignore', fd],
        timeout: DU_TIMEOUT_MS,
      })
      let out = ''
      child.stdout!.setEncoding('utf8').on('data', (d: string) => {
        out += d
      })
      child.on('error', () => resolve(0))
      child.on('close', (code) => {
        if (code !== 0) failed = true
        resolve(Number.parseInt(out, 10) || 0)
      })
    })
  try {
    const [allocated, apparent, entries] = await Promise.all([run(['-B1']), run(['-b']), run(['--inodes'])])
    return { allocated, apparent, entries, unreadable: failed ? 1 : 0 }
  } finally {
    closeSync(fd)
  }
}
