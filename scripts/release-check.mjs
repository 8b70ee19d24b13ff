#!/usr/bin/env node
// A release's gate (`npm run release:pack` runs it before packing; `npm publish` runs it as
// prepublishOnly): everything prepack checks, and no missing prebuild: one of every native part
// for every release platform and supported Python minor, none older than native/. A tarball
// without them compiles at install, which fails where there is no compiler (most users).
//   node scripts/release-check.mjs [ROOT]
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  distProblems,
  prebuildProblems,
  readPrebuildManifest,
  releasePlatforms,
  releaseProblems,
} from './package-checks.mjs'

const root = resolve(process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url)))
const problems = distProblems(root)
const manifest = readPrebuildManifest(root)
if (problems.length === 0) {
  if (manifest) problems.push(...prebuildProblems(root, manifest))
  problems.push(...releaseProblems(root, manifest, await releasePlatforms(root)))
}
if (problems.length) {
  for (const p of problems) console.error(`vis-runtime release: ${p}`)
  console.error(
    `vis-runtime release: refusing: ${problems.length} problem(s) above; nothing was packed or published.`,
  )
  process.exit(1)
}
console.log('vis-runtime release: every prebuild is present and current')
