#!/usr/bin/env node
// What `npm pack` (and `npm publish`) runs first: refuse to pack what would install broken or
// stale. The tarball carries dist/ and prebuilds/ as they are on disk, so a pack after editing
// src/ without `npm run build`, or after `npm run build:addon` without `npm run prebuildify`,
// would ship old code that the checkout no longer runs. Checks only; builds nothing. Missing
// prebuilds only warn here (a git dependency compiles in its postinstall instead); a release
// refuses them (release-check.mjs, run by `npm run release:pack` and `npm publish`).
//   node scripts/prepack.mjs [ROOT]   (ROOT: the package directory; default: this one)
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { distProblems, prebuildProblems, readPrebuildManifest } from './package-checks.mjs'

const root = resolve(process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url)))
const problems = distProblems(root)
const manifest = readPrebuildManifest(root)
if (!manifest) {
  console.warn(
    'vis-runtime prepack: no prebuilds/ (run `npm run prebuildify`): this tarball will compile its native parts at install, which needs a C++ toolchain and cmake; a release needs them (`npm run release:pack`)',
  )
} else problems.push(...prebuildProblems(root, manifest))

if (problems.length) {
  for (const p of problems) console.error(`vis-runtime prepack: ${p}`)
  console.error('vis-runtime prepack: not packing a tarball that would ship stale or broken parts.')
  process.exit(1)
}
