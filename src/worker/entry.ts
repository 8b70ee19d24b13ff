import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { entryScript } from '../util/bundle.js'
import { freshBundle } from './child-bundle.js'

let bundled: string | undefined | null = null

// The script a worker process runs. Built, it is dist/worker/child.cjs (one file, made by
// `npm run build`: child-bundle.ts) while that is fresh, else dist/worker/child.js. Run from
// the TypeScript sources (tests, development), the child is bundled once per host process
// with esbuild instead of starting every worker under a TypeScript loader, which costs
// ~0.3 s of CPU per worker.
export function childEntry(): Promise<string> {
  if (!import.meta.url.endsWith('.ts')) {
    bundled ??= freshBundle(dirname(fileURLToPath(import.meta.url)))
    if (bundled) return Promise.resolve(bundled)
  }
  return entryScript(import.meta.url, 'child', {
    folder: 'worker',
    externalPackages: true,
    // Older bundles go once no test run that started before an hour ago can still use them.
    pruneAfterMs: 3_600_000,
  })
}
