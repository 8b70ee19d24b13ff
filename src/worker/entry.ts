import { entryScript } from '../util/bundle.js'

// The script a worker process runs. Built, it is dist/worker/child.js. Run from the
// TypeScript sources (tests, development), the child is bundled once per host process
// with esbuild instead of starting every worker under a TypeScript loader, which costs
// ~0.3 s of CPU per worker.
export function childEntry(): Promise<string> {
  return entryScript(import.meta.url, 'child', {
    folder: 'worker',
    externalPackages: true,
    // Older bundles go once no test run that started before an hour ago can still use them.
    pruneAfterMs: 3_600_000,
  })
}
