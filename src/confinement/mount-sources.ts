import { existsSync, realpathSync } from 'node:fs'
import { join, relative } from 'node:path'
import type { ConfinementPolicy } from '../contracts/jail-policy.js'
import { hostDependencyDirs } from '../util/dependency-dirs.js'
import { packageRoot } from '../util/home.js'
import { homeAround } from './protected-homes.js'
import { type OpenedRoot, openBelow } from './root-guard.js'
import { hostDistributions, hostProgramDirs } from './runtime-trees.js'
import { hiddenMounts } from './sandbox-args.js'

// Where each mount of a jail comes from: read-only paths at their real place, and the pins under
// a root's masks from fds opened through the root's own fd.

// Read-only paths mounted where they really are: a package reached through a symlink (npm link,
// --preserve-symlinks) would otherwise be bound onto that symlink inside a root, which leads to
// a path the jail does not have. Its own path, outside the roots, becomes a symlink there too,
// so the command's paths under it still resolve.
export function resolvedReadOnly(
  paths: string[],
  roots: string[],
): { readOnly: string[]; links: { path: string; target: string }[] } {
  const readOnly: string[] = []
  const links: { path: string; target: string }[] = []
  for (const p of paths) {
    let real: string
    try {
      real = realpathSync(p)
    } catch {
      readOnly.push(p)
      continue
    }
    readOnly.push(real)
    const covered = (q: string) =>
      [...roots, ...links.map((l) => l.path)].some((r) => q.startsWith(`${r}/`) || q === r)
    if (real !== p && !covered(p)) links.push({ path: p, target: real })
  }
  return { readOnly: [...new Set(readOnly)], links }
}

export function realish(p: string): string {
  try {
    return realpathSync(p)
  } catch {
    return p
  }
}

// The directories pinned between a root and a mask inside it, opened through the root's fd:
// bound from fds like the roots, and refused when a symlink leads one out of its root.
export function pinFds(
  view: ConfinementPolicy,
  roots: OpenedRoot[],
  out: OpenedRoot[],
  context: { sessionId?: string; op: string },
  packageMounts: string[] = [],
): void {
  for (const pin of hiddenMounts(view, packageMounts).pins) {
    const root = roots
      .filter((r) => pin.startsWith(`${r.path}/`) && r.path !== view.overlay?.root)
      .sort((a, b) => b.path.length - a.path.length)[0]
    if (root) out.push({ path: pin, real: '', fd: openBelow(root, pin, context) })
  }
}

// Where a root contains the vis-runtime package (`npm install vis-runtime` in a project rooted
// at, or a session in the package's checkout), the package as the jail sees it: the host runs
// from it (dist/, node_modules/, the guest runtime, the CPython distribution, compileall), so
// it is bound read-only on top of the root, never writable through it. The same for the
// node_modules directories its dependencies load from (dependency-dirs.ts: hoisted beside it
// when it is installed as a dependency), and every CPython distribution the host could run
// (runtime-trees.ts hostDistributions: a whole staged directory, a checkout, VIS_PYTHON_HOME).
export function packageMounts(
  roots: Pick<OpenedRoot, 'path' | 'real'>[],
  pkg: string = packageRoot,
  dependencies: string[] = hostDependencyDirs(),
  distributions: string[] = mountedDistributions(),
  programs: string[] = hostProgramDirs(),
): string[] {
  const inside = (p: string, dir: string) => p === dir || p.startsWith(dir === '/' ? '/' : `${dir}/`)
  const out = new Set<string>()
  for (const real of [realish(pkg), ...dependencies, ...distributions, ...programs])
    for (const r of roots) if (inside(real, r.real)) out.add(join(r.path, relative(r.real, real)))
  return [...out]
}

// What a blank draft of `root` must still show from the real root: the host places inside it
// (packageMounts), outermost only (a package inside a kept node_modules comes with it). Real paths:
// the draft's holder binds them before its overlay hides the real root (draft-mount.ts).
export function hostPlacesWithin(root: string): string[] {
  const real = realish(root)
  const places = packageMounts([{ path: real, real }]).sort()
  return places.filter((p) => !places.some((q) => q !== p && p.startsWith(`${q}/`)))
}

// The distributions to bind: those that exist (bubblewrap cannot bind a missing source), not one
// inside a vis home, which the jail hides whole (a bind below the mask would show it again), and not
// one inside the package (the default staged directory), which is bound whole already.
function mountedDistributions(): string[] {
  const pkg = realish(packageRoot)
  return hostDistributions().filter(
    (d) => existsSync(d) && homeAround(d) === undefined && d !== pkg && !d.startsWith(`${pkg}/`),
  )
}
