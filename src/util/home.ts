import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

// The vis home holds per-user state: caches, logs, the database, extensions.
export function visHome(explicit?: string): string {
  return resolve(explicit ?? process.env.VIS_HOME ?? join(homedir(), '.vis'))
}

// The package root: where package.json, vis-guest/ and cpython-dist/ live.
// Both src/ (through tsx) and dist/ sit one level below src|dist/<folder>/.
export const packageRoot: string = resolve(fileURLToPath(new URL('../..', import.meta.url)))

export const guestDir: string = join(packageRoot, 'vis-guest')
