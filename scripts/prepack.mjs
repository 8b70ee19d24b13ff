#!/usr/bin/env node
// What `npm pack` (and `npm publish`) runs first: refuse to pack what would install broken or
// stale. The tarball carries dist/ and prebuilds/ as they are on disk, so a pack after editing
// src/ without `npm run build`, or after `npm run build:addon` without `npm run prebuildify`,
// would ship old code that the checkout no longer runs. Checks only; builds nothing.
//   node scripts/prepack.mjs [ROOT]   (ROOT: the package directory; default: this one)
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { newest } from './tree-times.mjs'

const root = resolve(process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url)))
const problems = []

// (a) dist/ is what ships: it must not be older than src/.
if (existsSync(join(root, 'src'))) {
  if (!existsSync(join(root, 'dist', 'cli', 'main.js')))
    problems.push('dist/ is missing: run `npm run build`')
  else if (newest(join(root, 'src'), '.ts') > newest(join(root, 'dist'), '.js'))
    problems.push('dist/ is older than src/: run `npm run build`')
}

// (b) prebuilds/ is what a consumer loads instead of compiling: each must be the build's own.
// Missing prebuilds only warn (a git dependency compiles in its postinstall instead).
const PART_FILE = { vis_loader: 'vis_loader.node', vis_confine: 'vis_confine.node' }
const manifestPath = join(root, 'prebuilds', 'manifest.json')
if (!existsSync(manifestPath)) {
  console.warn(
    'vis-runtime prepack: no prebuilds/ (run `npm run prebuildify`): this tarball will compile its native parts at install, which needs a C++ toolchain and cmake',
  )
} else {
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'))
  for (const f of manifest.files) {
    const shipped = join(root, 'prebuilds', f.path)
    const built = join(
      root,
      'build',
      'Release',
      PART_FILE[f.part] ?? (f.part.startsWith('vis_py') ? `${f.part}.node` : f.path.split('/').at(-1)),
    )
    if (!existsSync(shipped)) {
      problems.push(
        `${shipped} is listed in prebuilds/manifest.json but missing: run \`npm run prebuildify -- --no-build\``,
      )
      continue
    }
    const sha = createHash('sha256').update(readFileSync(shipped)).digest('hex')
    if (sha !== f.sha256)
      problems.push(
        `${shipped} does not match prebuilds/manifest.json: run \`npm run prebuildify -- --no-build\``,
      )
    else if (existsSync(built) && createHash('sha256').update(readFileSync(built)).digest('hex') !== sha)
      problems.push(
        `prebuilds/${f.path} is not build/Release's current ${f.part}: run \`npm run prebuildify -- --no-build\``,
      )
  }
}

if (problems.length) {
  for (const p of problems) console.error(`vis-runtime prepack: ${p}`)
  console.error('vis-runtime prepack: not packing a tarball that would ship stale or broken parts.')
  process.exit(1)
}
