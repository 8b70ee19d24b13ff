import { constants as C, close, closeSync, type Dirent, fstat, read, type Stats } from 'node:fs'
import { readdir, readlink } from 'node:fs/promises'
import { constants as OS } from 'node:os'
import { promisify } from 'node:util'
import { checkpoint } from '../util/check-use-hook.js'
import { VisError } from '../util/errors.js'
import { loadConfineAddon } from './native.js'

// Host-side file access under a tree the sandbox can write (a draft's upper directory, the
// real root a draft lands in, a draft seen through its mount holder). Such a tree can change
// between any two system calls, so nothing here checks a path and then opens it again by
// name: each path is resolved once, by openat2(2) beneath a directory fd, into an fd that
// every later step uses; names are only ever looked up one component at a time below an fd
// (`/proc/self/fd/<n>/<name>` is openat(n, name)).

// open(2) flag that node does not export.
export const O_PATH = 0o10000000
// openat2(2)'s resolve flags (linux/openat2.h).
export const RESOLVE_NO_MAGICLINKS = 0x02
export const RESOLVE_NO_SYMLINKS = 0x04
export const RESOLVE_BENEATH = 0x08
export const RESOLVE_IN_ROOT = 0x10
// Every component a real entry below the directory: no symlink, no `..` above it.
export const STRICT = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS

const fstatP = promisify(fstat)
const closeP = promisify(close)
const readP = promisify(read)

const errnoName = new Map(Object.entries(OS.errno).map(([k, v]) => [v, k]))

// openat2(dirfd, path, flags, resolve): an fd, or an error with node's usual `code`.
export function openAt2(dirfd: number, path: string, flags: number, resolve: number, mode = 0): number {
  const addon = loadConfineAddon()
  if (!addon?.openAt2)
    throw new VisError(
      'confine.addon-missing',
      'vis_confine.node is not built or too old: run `npm run build:addon` (the host opens files beneath a directory with it)',
      { op: 'open' },
    )
  // open(2) ignores the other flags beside O_PATH; openat2(2) refuses them (EINVAL).
  const f = flags & O_PATH ? flags & (O_PATH | C.O_DIRECTORY | C.O_NOFOLLOW) : flags
  try {
    return addon.openAt2(dirfd, path === '' ? '.' : path, f, resolve, mode)
  } catch (err) {
    const n = (err as { errno?: number }).errno
    if (n === undefined) throw err
    const code = errnoName.get(n) ?? `E${n}`
    if (code === 'ENOSYS')
      throw new VisError(
        'confine.openat2-missing',
        'this kernel has no openat2(2) (Linux 5.6 or later is needed): the host cannot open files beneath a directory safely',
        { op: 'open' },
      )
    throw Object.assign(new Error(`${code}: openat2 '${path}'`), { code, errno: -n, syscall: 'openat2' })
  }
}

// `/proc/self/fd/<fd>/<name>`: a lookup of one name below the directory the fd holds,
// whatever its path says now.
export const atFd = (fd: number, name = '') => (name ? `/proc/self/fd/${fd}/${name}` : `/proc/self/fd/${fd}`)

export const errCode = (err: unknown) => (err as NodeJS.ErrnoException | undefined)?.code

// The errors that say "no such entry as a real, link-free path": missing, or below a file
// or a symlink.
export const isAbsent = (err: unknown) => ['ENOENT', 'ENOTDIR', 'ELOOP', 'EXDEV'].includes(errCode(err) ?? '')

const split = (rel: string) => {
  const i = rel.lastIndexOf('/')
  return i < 0 ? { dir: '', name: rel } : { dir: rel.slice(0, i), name: rel.slice(i + 1) }
}

// A directory tree the host reads or changes while something else may swap its entries.
// Paths are relative to it ('' is the tree itself) and never pass through a symlink: a
// symlink where a directory was is an absent entry, and a final symlink is the link itself.
export class Tree {
  private constructor(readonly fd: number) {}

  // The tree's own path is trusted (the host made it, or the person named it).
  static open(path: string): Tree {
    return new Tree(openAt2(-100 /* AT_FDCWD */, path, O_PATH | C.O_DIRECTORY, 0))
  }

  // Synchronous: the fd is an O_PATH one, whose close(2) never waits on a device or a flush, so
  // a trip through the thread pool only cost every read beneath a directory its hop.
  async close(): Promise<void> {
    try {
      closeSync(this.fd)
    } catch {
      // Already closed: nothing to release.
    }
  }

  // An fd for rel itself (a final symlink: the link), or undefined when it is absent.
  openPath(rel: string): number | undefined {
    try {
      return openAt2(this.fd, rel, O_PATH | C.O_NOFOLLOW, STRICT)
    } catch (err) {
      if (isAbsent(err)) return undefined
      throw err
    }
  }

  // The directory holding rel, and rel's last name: operations on the entry itself go to
  // atFd(dir, name). undefined: a parent is absent (or not a real directory).
  parent(rel: string): { dir: number; name: string } | undefined {
    const { dir, name } = split(rel)
    try {
      return { dir: openAt2(this.fd, dir, O_PATH | C.O_DIRECTORY, STRICT), name }
    } catch (err) {
      if (isAbsent(err)) return undefined
      throw err
    }
  }

  async lstat(rel: string): Promise<Stats | undefined> {
    const fd = this.openPath(rel)
    if (fd === undefined) return undefined
    try {
      return await fstatP(fd)
    } finally {
      await closeP(fd)
    }
  }

  // The entries of a real directory at rel ([] when it is absent or not one).
  async readdir(rel: string): Promise<Dirent[]> {
    let fd: number
    try {
      fd = openAt2(this.fd, rel, C.O_RDONLY | C.O_DIRECTORY, STRICT)
    } catch (err) {
      if (isAbsent(err)) return []
      throw err
    }
    try {
      return await readdir(atFd(fd), { withFileTypes: true })
    } finally {
      await closeP(fd)
    }
  }

  // A symlink's target; undefined when rel is absent or no longer a symlink.
  async readlink(rel: string): Promise<string | undefined> {
    const p = this.parent(rel)
    if (!p) return undefined
    try {
      return await readlink(atFd(p.dir, p.name))
    } catch (err) {
      if (isAbsent(err) || errCode(err) === 'EINVAL') return undefined
      throw err
    } finally {
      await closeP(p.dir)
    }
  }

  // A regular file opened for reading with its stats; undefined when rel is absent or is not
  // a regular file now (a symlink, a directory, a fifo swapped in: never followed or waited on).
  async openFile(rel: string): Promise<{ fd: number; st: Stats } | undefined> {
    let fd: number
    try {
      fd = openAt2(this.fd, rel, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK | C.O_NOCTTY, STRICT)
    } catch (err) {
      if (isAbsent(err) || errCode(err) === 'ENXIO') return undefined
      throw err
    }
    const st = await fstatP(fd).catch(async (err) => {
      await closeP(fd)
      throw err
    })
    if (!st.isFile()) {
      await closeP(fd)
      return undefined
    }
    // Between the size the caller will look at and its read (tests grow the file here).
    await checkpoint('beneath.opened', rel)
    return { fd, st }
  }
}

// Reads len bytes at pos (fewer at the end of the file).
export async function readAt(fd: number, buf: Buffer, len: number, pos: number): Promise<number> {
  return (await readP(fd, buf, 0, len, pos)).bytesRead
}

// An open file's bytes from its start, never more than `max`. The sandbox can grow a file
// between any fstat and the read, so a size the host checked earlier bounds nothing: the read
// itself stops after max + 1 bytes, and `over` says the file held more than max when it was
// read (`data` is then its first max bytes). There is no unbounded read of an fd here.
export async function readCapped(fd: number, max: number): Promise<{ data: Buffer; over: boolean }> {
  const chunks: Buffer[] = []
  let pos = 0
  while (pos <= max) {
    const buf = Buffer.alloc(Math.min(1 << 16, max + 1 - pos))
    const n = await readAt(fd, buf, buf.length, pos)
    if (n === 0) break
    chunks.push(buf.subarray(0, n))
    pos += n
  }
  const all = Buffer.concat(chunks)
  return pos > max ? { data: all.subarray(0, max), over: true } : { data: all, over: false }
}

export function statFd(fd: number): Promise<Stats> {
  return fstatP(fd)
}

export async function closeFd(fd: number): Promise<void> {
  await closeP(fd).catch(() => undefined)
}
