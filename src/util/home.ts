import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

// The vis home holds per-user state: caches, logs, the database, extensions.
// An empty VIS_HOME (`VIS_HOME= vis run`) means unset, as shells treat it: resolving '' would put
// the database into the current directory, which is usually the workspace the model edits.
export function visHome(explicit?: string): string {
  const fromEnv = process.env.VIS_HOME || undefined
  return resolve(explicit || fromEnv || join(homedir(), '.vis'))
}

// The package root: where package.json, vis-guest/ and cpython-dist/ live.
// Both src/ (through tsx) and dist/ sit one level below src|dist/<folder>/.
export const packageRoot: string = resolve(fileURLToPath(new URL('../..', import.meta.url)))

export const guestDir: string = join(packageRoot, 'vis-guest')
