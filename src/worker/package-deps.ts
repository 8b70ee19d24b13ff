import { existsSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { packageRoot } from '../util/home.js'

// The npm packages a worker process loads (zod for its messages, node-gyp-build to find
// prebuilt addons). In a checkout they sit in the package's own node_modules; installed as
// a dependency, npm hoists them beside the package, outside the read-only package root the
// jail shows. Only these directories are added, not the consumer's whole node_modules.
const WORKER_PACKAGES = ['zod', 'node-gyp-build']

// Node's lookup order: node_modules of the package root, then of each parent directory.
function findPackage(name: string): string | undefined {
  for (let dir = packageRoot; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name)
    if (existsSync(join(candidate, 'package.json'))) return candidate
    if (dirname(dir) === dir) return undefined
  }
}

// The directories to mount read-only for a worker, beyond the package root itself.
export function workerPackageDirs(): string[] {
  const out: string[] = []
  for (const name of WORKER_PACKAGES) {
    const dir = findPackage(name)
    if (dir && relative(packageRoot, dir).startsWith('..')) out.push(dir)
  }
  return out
}
