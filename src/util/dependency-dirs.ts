import { existsSync, readFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { packageRoot } from './home.js'
import { within } from './path-within.js'
import { realish } from './real-path.js'

// Installed as a dependency, vis-runtime's own dependencies are hoisted beside it
// (P/node_modules/better-sqlite3 next to P/node_modules/vis-runtime), and with pnpm or workspaces
// they may lie further up or in a store. The host loads its code from all of them, unconfined, so
// each is as much "the package" as the package directory: bound read-only in a jail wherever it lies
// inside a root (mount-sources.ts packageMounts), refused by the host file tools (tools/fs/paths.ts)
// and refused as a root (root-guard.ts). The rule: EVERY enclosing node_modules directory (by real
// path) of the package and of every package its dependency graph resolves to, the way Node resolves
// them (required dependencies only, below); a dependency outside any node_modules (npm link)
// counts by its own directory. Every one, not
// the nearest: with pnpm the package lies in P/node_modules/.pnpm/<pkg>/node_modules, while
// P/node_modules holds the link an application loads it through and .pnpm/node_modules is where
// Node looks next for a name the package does not resolve itself.

type Manifest = { dependencies?: Record<string, string> }

function manifest(dir: string): Manifest {
  try {
    return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest
  } catch {
    return {}
  }
}

// Node's lookup of `name` from a package at real path `from`: <ancestor>/node_modules/<name> for
// each ancestor, nearest first, skipping ancestors that are themselves node_modules directories.
export function resolvePackageDir(name: string, from: string): string | undefined {
  let dir = from
  for (;;) {
    if (basename(dir) !== 'node_modules') {
      const candidate = join(dir, 'node_modules', name)
      if (existsSync(join(candidate, 'package.json'))) return realish(candidate)
    }
    const up = dirname(dir)
    if (up === dir) return undefined
    dir = up
  }
}

// Every directory named node_modules at or above `dir`, nearest first.
export function enclosingNodeModules(dir: string): string[] {
  const out: string[] = []
  for (let d = dir; ; d = dirname(d)) {
    if (basename(d) === 'node_modules') out.push(d)
    if (dirname(d) === d) return out
  }
}

// The directories the host loads the package's dependencies from, real paths, outermost only, and
// none inside the package itself (already read-only whole). `pkg` is for tests.
//
// Only REQUIRED dependencies (`dependencies`, at every level) are walked: an install puts each one
// in place, so where Node finds it is what the host loads. An optional or peer dependency may be
// missing, and its name is then looked up in every ancestor's node_modules, one of which a
// session's root may hold: a package a sandbox planted there under that name (a bare
// package.json, or a link to any folder) would make its folder read-only "runtime" at the next
// start and exempt what lies beside it (twelfth outsider pass). Installed, an optional or peer
// dependency lies inside a directory the required ones give (the package's own enclosing
// node_modules included): that is where npm, pnpm and workspaces put it, so it is covered there
// and never adds a directory of its own.
export function dependencyDirs(pkg: string = packageRoot): string[] {
  const start = realish(pkg)
  const seen = new Set<string>([start])
  const queue = [start]
  const found = new Set<string>()
  const note = (dir: string) => {
    const around = enclosingNodeModules(dir)
    for (const d of around.length > 0 ? around : [dir]) found.add(d)
  }
  note(start)
  while (queue.length > 0) {
    const dir = queue.shift()!
    for (const name of Object.keys(manifest(dir).dependencies ?? {})) {
      const at = resolvePackageDir(name, dir)
      if (at === undefined || seen.has(at)) continue
      seen.add(at)
      note(at)
      queue.push(at)
    }
  }
  const dirs = [...found].filter((d) => d !== start && !within(d, start))
  return dirs.filter((d) => !dirs.some((o) => o !== d && within(d, o))).sort()
}

// Computed once per process: the host's dependencies are loaded at start and do not move.
let cached: string[] | undefined
export function hostDependencyDirs(): string[] {
  cached ??= dependencyDirs()
  return cached
}

// A worker thread takes the main thread's list instead of walking on its own: a walk made later
// would take a package a sandbox planted since (R/node_modules/<a dependency's name>) for one of
// the host's, and count its node_modules as read-only in every jail when no running jail binds it so.
export function adoptHostDependencyDirs(dirs: readonly string[]): void {
  cached = [...dirs]
}
