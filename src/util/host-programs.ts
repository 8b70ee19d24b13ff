import { accessSync, constants as C, statSync } from 'node:fs'
import { basename, dirname, isAbsolute, join, resolve } from 'node:path'
import { within } from './path-within.js'
import { realish } from './real-path.js'

// Every program the host itself starts (git for the jail's identity, du, rm, bubblewrap, rg, the
// distribution tools, ...) is found here, never through the process's PATH. That PATH is routinely
// led by a directory inside a root (an activated venv's <root>/.venv/bin, npm's
// <root>/node_modules/.bin, an empty entry meaning the cwd), so a lookup by name would run a file a
// sandbox wrote, as the user, outside every jail. Programs run INSIDE a jail keep the jail's PATH.

// The system directories, in the usual order. Only root writes them.
export const SYSTEM_PROGRAM_DIRS = [
  '/usr/local/sbin',
  '/usr/local/bin',
  '/usr/sbin',
  '/usr/bin',
  '/sbin',
  '/bin',
]

// Operator overrides: a whole search path (absolute entries only), and one program by its own
// variable. Both are the operator's environment, never a session's.
const SEARCH_PATH_VAR = 'VIS_HOST_PATH'
const PROGRAM_VARS: Record<string, string> = { bwrap: 'VIS_BWRAP' }

export type HostProgram = {
  name: string
  // Absolute; undefined when no trusted directory has it.
  path: string | undefined
  // Where it came from: the override variable, or the search path it was found on.
  source: string
  // Set when a candidate was passed over, and why (shown by `vis doctor`).
  skipped?: string
}

// Real paths of every root a session of this process opened (root-guard.ts notes them): a program
// that lies in one, by its path or its real path, is never run, even from a system directory.
const sessionRoots = new Set<string>()
export function noteSessionRoot(real: string): void {
  sessionRoots.add(real)
}
// The roots noted so far (real paths), for a caller that checks its own paths against them.
export const notedSessionRoots = (): string[] => [...sessionRoots]

// The one of `roots` that holds `path` by its path, its real path or its parent's real path (a
// file not made yet, or a link named inside a root), if any.
export function rootHolding(path: string, roots: Iterable<string>): string | undefined {
  const places = [path, realish(path), join(realish(dirname(path)), basename(path))]
  for (const r of roots) if (places.some((p) => within(p, r))) return r
  return undefined
}

// The session root of this process that holds `path`, if any.
export const inSessionRoot = (path: string): string | undefined => rootHolding(path, sessionRoots)

function executable(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false
    accessSync(p, C.X_OK)
    return true
  } catch {
    return false
  }
}

// The entries of a search path a lookup may use: the absolute ones. An empty or relative entry
// names the cwd, which is routinely a root.
export const absoluteEntries = (dirs: readonly string[]): string[] =>
  dirs.filter((d) => d !== '' && isAbsolute(d))

// Every executable file called `name` on the search path `dirs`, in its order (absolute entries
// only). Whether one lies in a root is the caller's check, made when it runs the program.
export function programsOn(name: string, dirs: readonly string[]): string[] {
  return absoluteEntries(dirs)
    .map((d) => join(d, name))
    .filter(executable)
}

// The trusted search path: VIS_HOST_PATH's absolute entries when the operator set it, else the
// system directories.
export function trustedSearchPath(): string[] {
  const custom = process.env[SEARCH_PATH_VAR]
  return absoluteEntries(custom ? custom.split(':') : SYSTEM_PROGRAM_DIRS).map((d) => resolve(d))
}

// Candidates are looked up once per process (again only if the operator's variables change); the
// session-root check runs at every use, as roots are opened after start-up.
const candidates = new Map<string, { list: string[]; source: string }>()

function candidatesFor(name: string, extraDirs: readonly string[]): { list: string[]; source: string } {
  const override = PROGRAM_VARS[name] && process.env[PROGRAM_VARS[name]!]
  const key = [name, override ?? '', process.env[SEARCH_PATH_VAR] ?? '', ...extraDirs].join('\0')
  let found = candidates.get(key)
  if (found) return found
  if (override && isAbsolute(override)) {
    found = { list: executable(override) ? [override] : [], source: PROGRAM_VARS[name]! }
  } else {
    found = {
      list: programsOn(name, [...trustedSearchPath(), ...extraDirs]),
      source: process.env[SEARCH_PATH_VAR] ? SEARCH_PATH_VAR : 'system directories',
    }
  }
  candidates.set(key, found)
  return found
}

// The program `name` as the host runs it, from the trusted search path (and, for a caller that
// names them, extra directories it trusts as much: node's own bin directory for npm).
export function findHostProgram(name: string, extraDirs: readonly string[] = []): HostProgram {
  if (name.includes('/')) throw new TypeError(`findHostProgram: '${name}' is a path, not a program name`)
  const { list, source } = candidatesFor(name, extraDirs)
  let skipped: string | undefined
  for (const p of list) {
    const root = inSessionRoot(p)
    if (root === undefined) return { name, path: p, source, ...(skipped ? { skipped } : {}) }
    skipped = `${p} lies in the session root ${root}`
  }
  return { name, path: undefined, source, ...(skipped ? { skipped } : {}) }
}

// The absolute path, or undefined when the program is not installed where the host trusts it.
export function hostProgramPath(name: string, extraDirs: readonly string[] = []): string | undefined {
  return findHostProgram(name, extraDirs).path
}

// What `vis doctor` lists: the programs the host starts outside every jail.
export const HOST_PROGRAMS = [
  'bwrap',
  'git',
  'du',
  'rm',
  'rg',
  'prlimit',
  'unshare',
  'bash',
  'script',
  'mkfifo',
]

// The directory of the node binary running the host: npm sits beside it (nvm, the official
// tarball), and a node inside a root would already run the sandbox's code.
export function nodeBinDir(): string {
  return dirname(process.execPath)
}

// Test-only: forget the cached candidates (a test changes VIS_HOST_PATH or VIS_BWRAP).
export function resetHostProgramsForTest(): void {
  candidates.clear()
}
