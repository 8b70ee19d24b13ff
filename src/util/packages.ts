import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { packageRoot } from './home.js'

// Where an npm package this one depends on is installed, by Node's lookup order: the
// node_modules of the package root, then of each parent directory (npm hoists a consumer's
// dependencies beside the package, not inside it).
export function findPackageDir(name: string, from = packageRoot): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name)
    if (existsSync(join(candidate, 'package.json'))) return candidate
    if (dirname(dir) === dir) return undefined
  }
}
