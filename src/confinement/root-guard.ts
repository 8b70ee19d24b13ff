import { closeSync, fstatSync, openSync, readFileSync, readlinkSync, statfsSync } from 'node:fs'
import { join, relative, resolve, sep } from 'node:path'
import { hostDependencyDirs } from '../util/dependency-dirs.js'
import { isVisError, VisError } from '../util/errors.js'
import { packageRoot } from '../util/home.js'
import { noteSessionRoot } from '../util/host-programs.js'
import { hostStateParents, otherHostStateParents } from '../util/host-state-dirs.js'
import { within } from '../util/path-within.js'
import { realish } from '../util/real-path.js'
import { openAt2, STRICT } from './beneath.js'
import { homeAround, homesInside } from './protected-homes.js'
import { protectedRuntimeTrees } from './runtime-trees.js'

// Where a root may come from. Every jail that mounts roots (a session's worker, a warm-pool
// refill, a shell call's tool jail, a child session) goes through openRoots: each root is
// opened once as a directory fd, the fd (not the path) is checked, and the jail binds the fd
// through /proc/self/fd/N. A path swapped for a symlink after the check cannot change what is
// mounted: the fd still names the directory that was checked.

export type RootRules = {
  // Directories every root must resolve beneath (the operator's allow-list for API clients,
  // an MCP server's own roots). Unset: anywhere the other rules allow.
  within?: readonly string[]
  // What each root was when its session was created (rootIdentity, by root path): a root whose
  // path now names another directory (renamed away, a symlink put in its place by another
  // sandbox over its parent) is refused rather than mounted. Unset: the first open pins.
  pins?: Readonly<Record<string, string>>
}

export type OpenedRoot = {
  // Where the sandbox sees it: the root as the client named it, normalised.
  path: string
  // The directory the fd names, as the host resolved it.
  real: string
  fd: number
}

export type OpenedRoots = { roots: OpenedRoot[]; close(): void }

export const O_PATH = 0o10000000
export const O_DIRECTORY = 0o200000

// Kernel filesystems whose files describe or steer the host (its processes' environments,
// devices, cgroups, tracing) rather than hold a user's data.
const PSEUDO_TYPES = new Set([
  'proc',
  'sysfs',
  'devtmpfs',
  'devpts',
  'cgroup',
  'cgroup2',
  'securityfs',
  'debugfs',
  'tracefs',
  'bpf',
  'mqueue',
  'configfs',
  'fusectl',
  'pstore',
  'efivarfs',
  'binfmt_misc',
  'selinuxfs',
  'nsfs',
  'rpc_pipefs',
  'nfsd',
])
// The same by statfs magic, for a mount /proc/self/mountinfo does not list (another namespace's).
const PSEUDO_MAGIC = new Map<number, string>([
  [0x9fa0, 'proc'],
  [0x62656572, 'sysfs'],
  [0x1cd1, 'devpts'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x73636673, 'securityfs'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0xcafe4a11, 'bpf'],
  [0x19800202, 'mqueue'],
  [0x62656570, 'configfs'],
  [0x65735543, 'fusectl'],
  [0x6165676c, 'pstore'],
  [0xde5e81e4, 'efivarfs'],
  [0x42494e4d, 'binfmt_misc'],
  [0xf97cff8c, 'selinuxfs'],
  [0x6e736673, 'nsfs'],
])
// Where those live, and the runtime state beside them (/dev/shm, /run/user/N are tmpfs, which a
// workspace under /tmp may be too, so their place is the rule, not their type).
const SYSTEM_DIRS = ['/proc', '/sys', '/dev', '/run']

type Context = { sessionId?: string; op?: string }

// The refusals that need no filesystem: the same for a path and for what it resolves to.
export function lexicalRefusal(path: string, shown: string, ctx: Context): VisError | undefined {
  if (path === '/') {
    return new VisError(
      'policy.root-too-broad',
      `${shown === '/' ? '"/"' : `Root ${shown} resolves to "/" and`} cannot be a root: the jail lays its own /tmp, ` +
        '/proc, /dev and system libraries over the roots, so the whole filesystem cannot be mounted into it. ' +
        'Name the directories the session needs.',
      { ...ctx, path: shown },
    )
  }
  const sys = SYSTEM_DIRS.find((d) => within(path, d))
  if (sys !== undefined) return pseudoRefusal(shown, `lies in ${sys}`, ctx)
  return undefined
}

function pseudoRefusal(shown: string, why: string, ctx: Context): VisError {
  return new VisError(
    'policy.root-pseudo-fs',
    `Root ${shown} ${why}: roots may not be kernel pseudo-filesystems (/proc, /sys, /dev, /run and their ` +
      'kind), whose files expose the host and its processes. Name a directory that holds your files.',
    { ...ctx, path: shown },
  )
}

// The filesystem type of the mount an fd lies on: its mount id (fdinfo) looked up in mountinfo.
function fsTypeOf(fd: number): string | undefined {
  try {
    const id = /^mnt_id:\s*(\d+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1]
    if (id !== undefined) {
      for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
        if (line.split(' ', 1)[0] !== id) continue
        return line.split(' - ')[1]?.split(' ')[0]
      }
    }
  } catch {}
  try {
    return PSEUDO_MAGIC.get(Number(statfsSync(`/proc/self/fd/${fd}`).type))
  } catch {
    return undefined
  }
}

// The nearest `.vis` folder a path is, or lies in. Such a folder can only be reached through a root
// above it, where the jail masks its `extensions` and the host file tools refuse it; a root inside it
// would be judged from inside, where neither applies. Checked on the real and the lexical path, so
// neither a link to it nor a link inside it gets around this.
function visFolderAround(path: string): string | undefined {
  const parts = path.split(sep)
  const at = parts.lastIndexOf('.vis')
  return at > 0 ? parts.slice(0, at + 1).join(sep) || sep : undefined
}

// Checks one opened root: what the fd names now, not what the path named a moment ago.
function checkOpened(root: OpenedRoot, rules: RootRules, ctx: Context): void {
  const shown = root.path
  const lexical = lexicalRefusal(root.real, shown, ctx)
  if (lexical) throw lexical
  const type = fsTypeOf(root.fd)
  if (type !== undefined && PSEUDO_TYPES.has(type)) {
    throw pseudoRefusal(shown, `is on a ${type} filesystem`, ctx)
  }
  if (homeAround(root.real) !== undefined) {
    throw new VisError(
      'policy.root-vis-home',
      `Root ${shown} lies inside the vis home, which holds the server's database, logs and extensions. ` +
        'Name a directory outside it (a root that contains the home is allowed: the jail hides the home).',
      { ...ctx, path: shown },
    )
  }
  const visFolder = visFolderAround(root.real) ?? visFolderAround(resolve(shown))
  if (visFolder !== undefined) {
    throw new VisError(
      'policy.root-in-vis-folder',
      `Root ${shown} is or lies inside the .vis folder ${visFolder}, which holds a project's extensions and ` +
        'settings that run or apply on the host outside every sandbox. Name the project folder itself (its ' +
        '.vis folder is then masked in the jail) or a directory outside .vis.',
      { ...ctx, path: shown },
    )
  }
  for (const t of protectedRuntimeTrees()) {
    if (within(root.real, t.dir) && !(t.strict && root.real === t.dir)) {
      throw new VisError(
        'policy.root-in-runtime',
        `Root ${shown} lies inside the vis-runtime package or a CPython distribution it runs, which the ` +
          'host runs code from unconfined: a session may read it but never write there. Name a directory ' +
          'outside it (a root that contains the vis-runtime package is allowed: the jail shows the package read-only).',
        { ...ctx, path: shown },
      )
    }
  }
  const dependencies = dependencyDirRefusal(root, ctx)
  if (dependencies) throw dependencies
  if (rules.within !== undefined && !rules.within.map(realish).some((w) => within(root.real, w))) {
    throw new VisError(
      'policy.root-not-allowed',
      `Root ${shown} is not inside a directory this server lets its clients open. Name a directory inside ` +
        "the server's allowed roots (the operator sets them: vis serve --allow-root, VIS_ALLOW_ROOTS, or " +
        "mcp.json's serve.roots for MCP clients).",
      { ...ctx, path: shown },
    )
  }
  // After the allow-list: a client held to it learns nothing of where the host's temp directory is.
  const hostTmp = hostStateParents().find((t) => within(t, root.real))
  if (hostTmp !== undefined) {
    throw new VisError(
      'policy.root-holds-host-tmp',
      `Root ${shown} ${hostTmp === root.real ? 'is' : 'contains'} the host's temporary directory (TMPDIR, ` +
        "else /tmp), where vis keeps files other sessions' jails run and connect to (their tool site folder, " +
        'egress proxy sockets). Use a subfolder of it as the root (a folder made for the session), or start ' +
        'vis with TMPDIR set to a directory outside every root.',
      { ...ctx, path: shown },
    )
  }
  // Another live vis process's places are as much reach into its jails (a shell session's tool site).
  for (const other of otherHostStateParents()) {
    const held = other.parents.find((t) => within(t, root.real))
    if (held === undefined) continue
    throw new VisError(
      'policy.root-holds-host-tmp',
      `Root ${shown} ${held === root.real ? 'is' : 'contains'} the temporary directory of another vis process ` +
        `of this user (pid ${other.pid}), where it keeps files its sessions' jails run and connect to (their ` +
        'tool site folder, egress proxy sockets). Use a subfolder of the root that does not hold it, or stop ' +
        'that process (or start it with TMPDIR outside every root) first.',
      { ...ctx, path: shown, pid: other.pid },
    )
  }
}

// A root inside a node_modules directory the host loads its dependencies from (dependency-dirs.ts)
// would be writable in the jail; the package itself as a root stays allowed (bound read-only whole).
function dependencyDirRefusal(root: OpenedRoot, ctx: Context): VisError | undefined {
  if (root.real === realish(packageRoot)) return undefined
  if (!hostDependencyDirs().some((d) => within(root.real, d))) return undefined
  return new VisError(
    'policy.root-in-runtime',
    `Root ${root.path} lies inside a node_modules directory the host loads vis-runtime's dependencies from, ` +
      'unconfined: a session may read it but never write there. Name a directory outside it (a root ' +
      'that contains it is allowed: the jail shows it read-only).',
    { ...ctx, path: root.path },
  )
}

// A directory's identity (device and inode of an open fd): what a root is pinned to.
export function rootIdentity(fd: number): string {
  const st = fstatSync(fd, { bigint: true })
  return `${st.dev}:${st.ino}`
}

// The refusal for a root whose path names another directory than when its session was created.
export function rootChanged(path: string, ctx: Context): VisError {
  return new VisError(
    'policy.root-changed',
    `Root ${path} is no longer the directory it was when this session was created (it was moved, ` +
      'replaced or swapped for a link): the session is refused access through it. Recreate the session ' +
      'to work in what the path names now.',
    { ...ctx, path },
  )
}

// Opens each root once and notes its identity: the pins a session keeps for its lifetime.
export function pinRoots(
  paths: readonly string[],
  rules: RootRules,
  ctx: Context = {},
): Record<string, string> {
  const opened = openRoots(paths, rules, ctx)
  try {
    return Object.fromEntries(opened.roots.map((r) => [r.path, rootIdentity(r.fd)]))
  } finally {
    opened.close()
  }
}

// A test-only pause between the check and the mount, so a race test lands its swap exactly
// there. Only tests import the setter; unset, nothing waits.
let afterCheck: ((roots: readonly OpenedRoot[]) => Promise<void>) | undefined
export function setRootsCheckedHook(hook: typeof afterCheck): void {
  afterCheck = hook
}
export async function rootsChecked(roots: readonly OpenedRoot[]): Promise<void> {
  if (afterCheck) await afterCheck(roots)
}

// Opens and checks every root; the caller mounts from the fds and closes them once the jail
// holds its mounts. On a refusal every fd opened so far is closed.
export function openRoots(paths: readonly string[], rules: RootRules, ctx: Context = {}): OpenedRoots {
  const roots: OpenedRoot[] = []
  const close = () => {
    for (const r of roots.splice(0)) {
      try {
        closeSync(r.fd)
      } catch {}
    }
  }
  try {
    for (const given of paths) {
      const path = resolve(given)
      const lexical = lexicalRefusal(path, path, ctx)
      if (lexical) throw lexical
      let fd: number
      try {
        // O_PATH: no read permission needed and nothing of the directory is opened, only named.
        fd = openSync(path, O_PATH | O_DIRECTORY)
      } catch (err) {
        throw openRefusal(err as NodeJS.ErrnoException, path, ctx)
      }
      const real = readlinkSync(`/proc/self/fd/${fd}`)
      roots.push({ path, real, fd })
      if (real.endsWith(' (deleted)'))
        throw openRefusal({ code: 'ENOENT' } as NodeJS.ErrnoException, path, ctx)
      checkOpened(roots[roots.length - 1] as OpenedRoot, rules, ctx)
      // The host never runs a program from a session's root (util/host-programs.ts).
      noteSessionRoot(real)
      // After the rules: a root swapped for somewhere they refuse is named for that reason.
      const pin = rules.pins?.[path]
      if (pin !== undefined && rootIdentity(fd) !== pin) throw rootChanged(path, ctx)
    }
  } catch (err) {
    close()
    throw err
  }
  return { roots, close }
}

// Opens a directory below an opened root (a mount point the jail pins) as an fd, refused when a
// symlink on the way leads out of the root.
export function openBelow(root: OpenedRoot, path: string, ctx: Context = {}): number {
  const rel = relative(root.path, path)
  let fd: number
  try {
    fd = openSync(join(`/proc/self/fd/${root.fd}`, rel), O_PATH | O_DIRECTORY)
  } catch (err) {
    throw openRefusal(err as NodeJS.ErrnoException, path, ctx)
  }
  if (!within(readlinkSync(`/proc/self/fd/${fd}`), root.real)) {
    closeSync(fd)
    throw new VisError(
      'policy.root-not-allowed',
      `${path} leads out of its root ${root.path} through a symlink; the jail cannot mount it.`,
      { ...ctx, path },
    )
  }
  return fd
}

// The identity of a directory below an opened root, resolved from the root's fd by openat2(2)
// with no symlink on the way and nothing above the root: what a child session's narrower root
// is pinned to. By path, a link planted below the root (or the root's path swapped since it was
// opened) could lead anywhere; from the fd, only to a real directory beneath what was opened.
export function identityBeneath(root: OpenedRoot, path: string, ctx: Context = {}): string {
  const rel = relative(root.path, path)
  if (rel === '') return rootIdentity(root.fd)
  let fd: number
  try {
    fd = openAt2(root.fd, rel, O_PATH | O_DIRECTORY, STRICT)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ELOOP' || code === 'EXDEV') {
      throw new VisError(
        'policy.root-not-allowed',
        `Root ${path} leads through a symlink below ${root.path}; a narrower root must name a real ` +
          'directory inside its parent root, with no link on the way. Name the directory itself.',
        { ...ctx, path },
      )
    }
    if (isVisError(err)) throw err
    throw openRefusal(err as NodeJS.ErrnoException, path, ctx)
  }
  try {
    return rootIdentity(fd)
  } finally {
    closeSync(fd)
  }
}

function openRefusal(err: NodeJS.ErrnoException, path: string, ctx: Context): VisError {
  if (err.code === 'ENOTDIR') {
    return new VisError(
      'policy.root-not-directory',
      `Root ${path} is not a directory; roots are directories.`,
      {
        ...ctx,
        path,
      },
    )
  }
  if (err.code === 'ENOENT') {
    return new VisError('confine.path-missing', `cannot confine: these paths do not exist: ${path}`, {
      ...ctx,
      path,
    })
  }
  return new VisError('policy.root-unreadable', `Root ${path} cannot be opened (${err.code ?? 'error'}).`, {
    ...ctx,
    path,
  })
}

// The vis homes inside these roots: each one's real path, and its mask as the sandbox sees it
// (under the root's path). One read of the homes, so what a jail hides and what it says it hides
// (live-jails.ts) are the same list.
export function maskedHomes(roots: readonly OpenedRoot[]): { real: string; mask: string }[] {
  const out: { real: string; mask: string }[] = []
  for (const r of roots) {
    for (const home of homesInside(r.real))
      if (home !== r.real) out.push({ real: home, mask: join(r.path, relative(r.real, home)) })
  }
  return out
}

// Masks for the vis homes inside these roots, as the sandbox sees them (under the root's path).
export function homeMasks(roots: readonly OpenedRoot[]): string[] {
  return [...new Set(maskedHomes(roots).map((h) => h.mask))]
}

// The same by path, for the host-side file tools: the vis homes inside these roots, as a client
// names them, which the tools refuse like the jail hides them.
export function homeMasksFor(roots: readonly string[]): string[] {
  return homeMasks(roots.map((r) => ({ path: resolve(r), real: realish(r), fd: -1 })))
}

// Checks roots without keeping them open: the early refusal a session's creation answers with.
export function checkRootPaths(
  paths: readonly string[],
  rules: RootRules,
  ctx: Context = {},
): Record<string, string> {
  return pinRoots(paths, rules, ctx)
}
