import { existsSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { distributionPlaces } from '../distribution/resolve.js'
import { packageRoot } from '../util/home.js'
import { realish } from '../util/real-path.js'

// The trees the host runs code from: the vis-runtime package (its JavaScript, the guest runtime,
// the staged CPython distributions) and every CPython distribution a worker runs, wherever it
// lives (VIS_PYTHON_HOME, a fetched one in a cache). `vis python` and every worker import from
// them unconfined, so a root inside one (a .pth planted in its site-packages runs on the host)
// is refused. A root that CONTAINS the package is allowed: the jail binds the package read-only
// over it (mount-sources.ts packageMounts).
const runtimeTrees = new Set<string>()
export function protectRuntimeTree(dir: string): void {
  runtimeTrees.add(resolve(dir))
}
export function protectedRuntimeTrees(): { dir: string; strict: boolean }[] {
  const distributions = new Set([...runtimeTrees, ...distributionPlaces()].map((d) => realish(d)))
  return [
    // The package itself may be a root (bound read-only whole); only what lies below it is refused.
    { dir: realish(packageRoot), strict: true },
    ...[...distributions].map((dir) => ({ dir, strict: false })),
  ]
}

// The CPython distributions the host runs or could run (resolved for a worker, and every place
// distributionPlaces names: the staged directory, the per-user cache, a checkout, VIS_PYTHON_HOME),
// real paths: the host file tools never change anything inside one (tools/fs/paths.ts), as the
// jail binds each read-only. The package is not listed (the caller checks it on its own terms).
export function hostDistributions(): string[] {
  return protectedRuntimeTrees()
    .filter((t) => !t.strict)
    .map((t) => t.dir)
}

// The folders of what the host itself executes or loads: the node binary it runs (an nvm, fnm or
// volta node lies under $HOME, often inside a root) and VIS_ADDON_DIR. Bound read-only like the
// package, their parents pinned: binding the file alone left its folder free to be renamed aside
// and a node or an addon planted under the old name (tenth outsider pass).
// A node install's whole prefix (nvm's ~/.nvm/versions/node/vX, fnm, volta: bin/node beside
// include/node and lib/node_modules) is bound, not bin/ alone: `vis bundle` runs the npm in its
// lib/node_modules, and global packages run from there (eleventh outsider pass's notes).
export function hostProgramDirs(): string[] {
  const bin = dirname(realish(process.execPath))
  const prefix = dirname(bin)
  const isInstall = basename(bin) === 'bin' && existsSync(join(prefix, 'include', 'node', 'node.h'))
  const dirs = [isInstall ? prefix : bin]
  if (process.env.VIS_ADDON_DIR) dirs.push(realish(process.env.VIS_ADDON_DIR))
  return dirs.filter((d) => existsSync(d))
}
