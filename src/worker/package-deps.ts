import { relative } from 'node:path'
import { packageRoot } from '../util/home.js'
import { findPackageDir } from '../util/packages.js'

// The npm packages a worker process loads (zod for its messages, node-gyp-build to find
// prebuilt addons). In a checkout they sit in the package's own node_modules; installed as
// a dependency, npm hoists them beside the package, outside the read-only package root the
// jail shows. Only these directories are added, not the consumer's whole node_modules.
const WORKER_PACKAGES = ['zod', 'node-gyp-build']

// The directories to mount read-only for a worker, beyond the package root itself.
export function workerPackageDirs(): string[] {
  const out: string[] = []
  for (const name of WORKER_PACKAGES) {
    const dir = findPackageDir(name)
    if (dir && relative(packageRoot, dir).startsWith('..')) out.push(dir)
  }
  return out
}
