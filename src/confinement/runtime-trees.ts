import { resolve } from 'node:path'
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
