import { constants as C } from 'node:fs'
import { type FileHandle, lstat, open, readlink, realpath } from 'node:fs/promises'
import { basename, dirname, isAbsolute, resolve, sep } from 'node:path'
import { atFd, closeFd, openAt2, RESOLVE_IN_ROOT, RESOLVE_NO_MAGICLINKS } from '../../confinement/beneath.js'
import { rootChanged, rootIdentity } from '../../confinement/root-guard.js'
import { hostDistributions, hostProgramDirs } from '../../confinement/runtime-trees.js'
import { checkpoint } from '../../util/check-use-hook.js'
import { hostDependencyDirs } from '../../util/dependency-dirs.js'
import { VisError } from '../../util/errors.js'
import { packageRoot } from '../../util/home.js'

// Linux open(2) flag that node does not export: a handle naming a file
// without opening it for I/O (no blocking on FIFOs, no read permission needed).
export const O_PATH = 0o10000000
const MAX_LINK_HOPS = 8

// A file with more than one hard link shares its inode with another name, which may be outside
// the roots (a link planted into a root): the host tools never change such a file through the
// root, and say why. The guest's audit hook refuses the same (native/runtime/audit.cc).
export async function refuseHardLinked(
  dir: FileHandle,
  name: string,
  path: string,
  op: string,
): Promise<void> {
  const st = await lstat(at(dir, name)).catch(() => undefined)
  if (!st?.isFile() || st.nlink <= 1) return
  throw new VisError(
    'tool.hard-linked',
    `${op}: '${path}' has ${st.nlink} hard links, so changing it through the root would also change the other links, which may be outside the roots; nothing was changed (write a new file, or remove the other links first)`,
    { op, path, links: st.nlink },
  )
}

export function isWithin(path: string, root: string): boolean {
  if (root === sep) return path.startsWith(sep)
  return path === root || path.startsWith(root + sep)
}

// `/proc/self/fd/<n>/<name>` behaves like openat(n, name): the lookup starts
// at the directory that handle names, whatever its path says now.
export function at(dir: FileHandle, name = ''): string {
  return name ? `/proc/self/fd/${dir.fd}/${name}` : `/proc/self/fd/${dir.fd}`
}

export interface ParentRef {
  dir: FileHandle
  name: string
  // Real path of the entry (parent's real path joined with the name).
  real: string
}

// The session's path boundary. Every path is first normalised and checked
// lexically against the roots; then what is actually opened is checked again
// by reading the kernel's name for the open handle, so a symlink swapped in
// between the check and the open cannot lead outside. Callers act only on
// the verified handle (or on names looked up relative to it).
export class PathGuard {
  private realRootsP: Promise<string[]> | undefined

  constructor(
    readonly roots: readonly string[],
    readonly sessionId = '',
    // Directories inside the roots the tools must not touch (the extension directories the
    // session's jail masks): host tools run unjailed, so the guard refuses them here too.
    readonly hidden: readonly string[] = [],
    // Where a checked path is actually opened: a session in a draft sees its workspace
    // through its worker's overlay, as `path` inside the mount holder's root (src/drafts/
    // view.ts); undefined: the host's own filesystem.
    readonly through: (abs: string) => { root: string; path: string } | undefined = () => undefined,
    // Each root's identity when the session was created (root-guard.ts): with pins, every
    // resolution of the roots checks the path still names that directory (policy.root-changed).
    readonly pins?: Readonly<Record<string, string>>,
  ) {
    if (roots.length === 0) throw new VisError('tool.no-roots', 'the session has no roots to work in', {})
  }

  get workspace(): string {
    return this.roots[0]!
  }

  realRoots(): Promise<string[]> {
    // Pinned roots are resolved afresh each time: another sandbox over a root's parent can
    // rename it away and leave a link in its place at any moment.
    if (this.pins) return Promise.all(this.roots.map((r) => this.pinnedReal(r)))
    this.realRootsP ??= Promise.all(this.roots.map((r) => realpath(r).catch(() => resolve(r))))
    return this.realRootsP
  }

  private async pinnedReal(root: string): Promise<string> {
    const abs = resolve(root)
    const pin = this.pins?.[abs]
    let fh: FileHandle
    try {
      fh = await open(abs, O_PATH | C.O_DIRECTORY)
    } catch {
      return abs
    }
    try {
      if (pin !== undefined && rootIdentity(fh.fd) !== pin) {
        throw rootChanged(abs, { sessionId: this.sessionId, op: 'tool' })
      }
      return await readlink(at(fh))
    } finally {
      await fh.close()
    }
  }

  // Roots the session may read but not change (its mode, src/confinement/modes.ts) and why: every
  // tool that changes an entry refuses one inside them, as the jail shows them read-only.
  readOnlyRoots: { roots: readonly string[]; why: string } | undefined

  private realHiddenP: Promise<string[]> | undefined
  realHidden(): Promise<string[]> {
    this.realHiddenP ??= Promise.all(this.hidden.map((h) => realpath(h).catch(() => resolve(h))))
    return this.realHiddenP
  }

  // The vis-runtime package, when a root contains it: the host runs from it (its JavaScript,
  // the guest runtime, the CPython distribution), so the tools read it but never change it, as
  // the jail mounts it read-only (confinement/mount-sources.ts packageMounts). The same for every
  // CPython distribution the host runs (VIS_PYTHON_HOME inside a root): a .pth planted in its
  // site-packages runs in `vis python` and the trusted extension worker, unconfined.
  private realPackageP: Promise<string> | undefined
  // above: also refuse an entry that contains the package (renaming or removing it would let
  // a fresh package be planted at the path the host runs from).
  async refuseReadOnly(real: string, path: string, op: string, above = true): Promise<void> {
    this.refuseDependencyDir(real, path, op, above)
    await this.refuseFrozenRoot(real, path, op)
    await this.refuseProjectConfig(real, path, op)
    this.realPackageP ??= realpath(packageRoot).catch(() => resolve(packageRoot))
    const trees = [
      { dir: await this.realPackageP, what: 'the vis-runtime package' },
      // Read afresh: a distribution resolved since (another minor) counts from then on.
      ...hostDistributions().map((dir) => ({ dir, what: 'a CPython distribution the host runs' })),
      // The node install the host runs (and VIS_ADDON_DIR's native addons), which the jail binds
      // read-only too (the hoisted npm dependencies are refuseDependencyDir's).
      ...hostProgramDirs().map((dir) => ({
        dir,
        what: 'code the host loads or runs (native addons, its node install)',
      })),
    ]
    for (const t of trees) {
      if (!isWithin(real, t.dir) && !(above && isWithin(t.dir, real))) continue
      throw new VisError(
        'tool.read-only-path',
        `${op}: '${path}' is ${isWithin(real, t.dir) ? 'inside' : 'a directory that contains'} ${t.what}, which sessions may read but never change (the host runs its code from there, outside every jail); nothing was changed`,
        { sessionId: this.sessionId, op, path },
      )
    }
  }

  // A `.vis` folder anywhere in the roots is a project's configuration, and its extensions run on
  // the host, unconfined, for whoever starts vis there: the tools never change it (defence in
  // depth; what loads from a project is gated by the person's trust, extensions/trust.ts).
  private async refuseProjectConfig(real: string, path: string, op: string): Promise<void> {
    const root = await this.rootOf(real)
    const below = root === real && !(await this.realRoots()).includes(real) ? real : real.slice(root.length)
    if (!below.split(sep).includes('.vis')) return
    throw new VisError(
      'tool.read-only-path',
      `${op}: '${path}' is inside a .vis folder, a project's configuration (its extensions run on the host, outside every jail), which sessions may read but never change; nothing was changed. Ask the person to edit it themselves`,
      { sessionId: this.sessionId, op, path },
    )
  }

  // The node_modules directories the host loads the package's dependencies from (hoisted beside
  // it when vis-runtime is a project's dependency: util/dependency-dirs.ts), read-only in
  // the jail likewise: a rewritten dependency would run in the next host process, unconfined.
  private refuseDependencyDir(real: string, path: string, op: string, above: boolean): void {
    const dir = hostDependencyDirs().find((d) => isWithin(real, d) || (above && isWithin(d, real)))
    if (dir === undefined) return
    throw new VisError(
      'tool.read-only-path',
      `${op}: '${path}' is ${isWithin(real, dir) ? 'inside' : 'a directory that contains'} a node_modules directory the host loads vis-runtime's dependencies from, which sessions may read but never change (the host runs that code, outside every jail); nothing was changed`,
      { sessionId: this.sessionId, op, path },
    )
  }

  private async refuseFrozenRoot(real: string, path: string, op: string): Promise<void> {
    const frozen = this.readOnlyRoots
    if (!frozen || frozen.roots.length === 0) return
    const reals = await this.realRoots()
    const hit = this.roots.some(
      (r, i) => frozen.roots.includes(r) && (isWithin(real, r) || isWithin(real, reals[i] ?? r)),
    )
    if (!hit) return
    throw new VisError('tool.session-read-only', `${op}: '${path}' was not changed: ${frozen.why}`, {
      sessionId: this.sessionId,
      op,
      path,
    })
  }

  // The innermost real root containing a verified real path.
  async rootOf(real: string): Promise<string> {
    const inside = (await this.realRoots()).filter((r) => isWithin(real, r))
    return inside.sort((x, y) => y.length - x.length)[0] ?? real
  }

  deny(path: string, op: string, why: string): VisError {
    return new VisError(
      'tool.path-denied',
      `${op}: '${path}' ${why}; allowed roots: ${this.roots.join(', ')} (relative paths start at ${this.workspace})`,
      { sessionId: this.sessionId, op, path },
    )
  }

  // Shows a path to the model: relative to the workspace when inside it.
  async display(real: string): Promise<string> {
    const ws = (await this.realRoots())[0]!
    if (real === ws) return '.'
    if (isWithin(real, ws)) return real.slice(ws === sep ? 1 : ws.length + 1)
    return real
  }

  async lexical(path: string, op: string): Promise<string> {
    if (typeof path !== 'string' || path === '' || path.includes('\0')) {
      throw new VisError('tool.bad-args', `${op}: a path must be a non-empty string`, {
        op,
        path: String(path),
      })
    }
    const abs = resolve(this.workspace, path)
    const candidates = [...this.roots, ...(await this.realRoots())]
    if (!candidates.some((r) => isWithin(abs, resolve(r)))) {
      throw this.deny(
        path,
        op,
        isAbsolute(path) ? 'is outside the allowed roots' : 'escapes the allowed roots',
      )
    }
    return abs
  }

  async verify(fh: FileHandle, path: string, op: string): Promise<string> {
    const real = await readlink(at(fh))
    const roots = await this.realRoots()
    if (!roots.some((r) => isWithin(real, r))) {
      await fh.close()
      throw this.deny(path, op, 'resolves (through a symlink) outside the allowed roots')
    }
    if ((await this.realHidden()).some((h) => isWithin(real, h))) {
      await fh.close()
      throw this.deny(path, op, 'is inside an extension directory or a vis home, which sessions cannot reach')
    }
    return real
  }

  // Opens a path, following symlinks, and proves the result is inside a root.
  async open(
    path: string,
    op: string,
    flags: number = C.O_RDONLY,
  ): Promise<{ fh: FileHandle; real: string }> {
    const abs = await this.lexical(path, op)
    // Between the lexical check and the open a link may be swapped in anywhere on the path:
    // what counts is what the open reached, which verify() reads from the handle.
    await checkpoint('tool.open', abs)
    let fh: FileHandle
    try {
      fh = await this.openOnce(abs, flags | C.O_NOCTTY | C.O_NONBLOCK)
    } catch (err) {
      throw this.fsError(err, path, op)
    }
    return { fh, real: await this.verify(fh, path, op) }
  }

  // One open of abs. In a draft it is resolved inside the mount holder's root
  // (RESOLVE_IN_ROOT): a link in the draft leads where the draft says, never to the host's
  // file of that name. The fd it gives is then re-opened through its own /proc/self/fd magic
  // link (the very same file, no lookup by name) to get a FileHandle, which node only makes
  // from a path.
  private async openOnce(abs: string, flags: number): Promise<FileHandle> {
    const v = this.through(abs)
    if (!v) return open(abs, flags)
    const root = openAt2(-100 /* AT_FDCWD */, v.root, O_PATH | C.O_DIRECTORY, 0)
    let fd: number
    try {
      fd = openAt2(root, v.path, flags, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, 0o666)
    } finally {
      await closeFd(root)
    }
    try {
      return await open(atFd(fd), flags & ~(C.O_CREAT | C.O_EXCL | C.O_TRUNC | C.O_NOFOLLOW))
    } finally {
      await closeFd(fd)
    }
  }

  // The verified parent directory of a path plus the final name, for
  // operations on the entry itself (create, rename, unlink). With follow,
  // a final component that is a symlink is replaced by its (checked) target.
  async parent(path: string, op: string, follow = false): Promise<ParentRef> {
    let abs = await this.lexical(path, op)
    for (let hop = 0; ; hop++) {
      const name = basename(abs)
      if ((await this.realRoots()).includes(abs) || this.roots.includes(abs) || !name) {
        throw this.deny(path, op, 'is a root itself, which this operation cannot act on')
      }
      const { fh: dir, real } = await this.open(dirname(abs), op, O_PATH | C.O_DIRECTORY)
      const ref = { dir, name, real: real === sep ? sep + name : real + sep + name }
      // Renaming or removing a directory above an extension directory would let a fresh one
      // be planted at the path the host loads extensions from.
      if ((await this.realHidden()).some((h) => isWithin(h, ref.real))) {
        await dir.close()
        throw this.deny(
          path,
          op,
          'is or contains an extension directory or a vis home, which sessions cannot change',
        )
      }
      // Every caller of parent() changes the entry (write, patch, move, delete).
      await this.refuseReadOnly(ref.real, path, op).catch(async (err) => {
        await dir.close()
        throw err
      })
      if (!follow) return ref
      const st = await lstat(at(dir, name)).catch(() => undefined)
      if (!st?.isSymbolicLink()) return ref
      const target = await readlink(at(dir, name)).catch((err) => {
        throw this.fsError(err, path, op)
      })
      await dir.close()
      if (hop >= MAX_LINK_HOPS)
        throw new VisError('tool.path-loop', `${op}: too many symlinks in '${path}'`, { op, path })
      abs = resolve(real, target)
      const candidates = [...this.roots, ...(await this.realRoots())]
      if (!candidates.some((r) => isWithin(abs, resolve(r)))) {
        throw this.deny(path, op, 'is a symlink that leads outside the allowed roots')
      }
    }
  }

  fsError(err: unknown, path: string, op: string): VisError {
    const code = (err as NodeJS.ErrnoException)?.code
    const ctx = { sessionId: this.sessionId, op, path }
    if (code === 'ENOENT') return new VisError('tool.not-found', `${op}: '${path}' does not exist`, ctx)
    if (code === 'ENOTDIR')
      return new VisError('tool.not-found', `${op}: a parent of '${path}' is not a directory`, ctx)
    if (code === 'ELOOP')
      return new VisError(
        'tool.path-loop',
        `${op}: '${path}' is a symlink loop or a symlink where none may be`,
        ctx,
      )
    if (code === 'EACCES' || code === 'EPERM')
      return new VisError('tool.permission', `${op}: permission denied for '${path}'`, ctx)
    if (code === 'EISDIR') return new VisError('tool.is-directory', `${op}: '${path}' is a directory`, ctx)
    if (code === 'EEXIST') return new VisError('tool.exists', `${op}: '${path}' already exists`, ctx)
    if (code === 'ENOTEMPTY')
      return new VisError('tool.not-empty', `${op}: directory '${path}' is not empty`, ctx)
    return new VisError('tool.io', `${op}: ${(err as Error)?.message ?? String(err)}`, ctx, { cause: err })
  }
}
