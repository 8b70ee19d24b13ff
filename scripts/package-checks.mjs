// What must hold before a tarball leaves this checkout. prepack.mjs (every `npm pack`) refuses
// stale parts and only warns when prebuilds/ is absent, so a git dependency still installs by
// compiling; release-check.mjs (`npm run release:pack`, `npm publish`) refuses that too: a
// release ships a prebuild for every part, platform and Python minor it supports.
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { pathToFileURL } from 'node:url'
import { newest } from './tree-times.mjs'

// The platforms a release carries prebuilds for, each with its node-gyp-build tuple, libc tag and
// supported minors: every row of the platform seam (dist/distribution/platform.js TARGETS). Another
// architecture's files are cross-built here (`build-addon.mjs --platform`, issue 37).
export async function releasePlatforms(root) {
  const mod = await import(pathToFileURL(join(root, 'dist', 'distribution', 'platform.js')).href)
  return mod.TARGETS.map((t) => ({ platform: t.nodeTuple, libc: t.libc, minors: [...t.minors] }))
}

// Where a platform's parts are built: build/Release for this machine's, build/<tuple>/Release for a cross build.
const buildDirFor = (root, platform) =>
  platform === `${process.platform}-${process.arch}`
    ? join(root, 'build', 'Release')
    : join(root, 'build', platform, 'Release')

// The parts every platform needs besides one runtime addon per Python minor.
const COMMON_PARTS = ['vis_loader', 'vis_confine', 'vis_seccomp', 'vis-launcher']
const PART_FILE = { vis_loader: 'vis_loader.node', vis_confine: 'vis_confine.node' }
// What each part is compiled from: a prebuild older than any of these is not this source's.
// (native/'s README.md is not: a doc edit changes no binary).
const SOURCES = ['native', 'CMakeLists.txt']

const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex')

// (a) dist/ is what ships: it must not be older than src/.
export function distProblems(root) {
  if (!existsSync(join(root, 'src'))) return []
  if (!existsSync(join(root, 'dist', 'cli', 'main.js'))) return ['dist/ is missing: run `npm run build`']
  if (newest(join(root, 'src'), '.ts') > newest(join(root, 'dist'), '.js'))
    return ['dist/ is older than src/: run `npm run build`']
  return []
}

export function readPrebuildManifest(root) {
  const path = join(root, 'prebuilds', 'manifest.json')
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : undefined
}

// (b) each listed prebuild is there, is what the manifest says, and is build/Release's current file.
export function prebuildProblems(root, manifest) {
  const problems = []
  for (const f of manifest.files) {
    const shipped = join(root, 'prebuilds', f.path)
    const built = join(
      buildDirFor(root, f.platform ?? `${process.platform}-${process.arch}`),
      PART_FILE[f.part] ?? (f.part.startsWith('vis_py') ? `${f.part}.node` : f.path.split('/').at(-1)),
    )
    if (!existsSync(shipped)) {
      problems.push(
        `${shipped} is listed in prebuilds/manifest.json but missing: run \`npm run prebuildify -- --no-build\``,
      )
      continue
    }
    const sha = sha256(shipped)
    if (sha !== f.sha256)
      problems.push(
        `${shipped} does not match prebuilds/manifest.json: run \`npm run prebuildify -- --no-build\``,
      )
    else if (existsSync(built) && sha256(built) !== sha)
      problems.push(
        `prebuilds/${f.path} is not ${relative(root, dirname(built))}'s current ${f.part}: run \`npm run prebuildify -- --no-build${f.platform && f.platform !== `${process.platform}-${process.arch}` ? ` --platform ${f.platform}` : ''}\``,
      )
  }
  return problems
}

// The minors the package supports, from its one definition (dist/distribution/platform.js).
export async function supportedMinors(root) {
  const mod = await import(pathToFileURL(join(root, 'dist', 'distribution', 'platform.js')).href)
  return [...mod.SUPPORTED_MINORS]
}

// (c) a release: a prebuild of every part for every release platform and its supported minors,
// none older than the native sources. platforms: releasePlatforms(root).
export function releaseProblems(root, manifest, platforms) {
  const problems = []
  const rebuild =
    'stage that Python and run `npm run release:pack` (it builds, stages and lays out every prebuild)'
  if (!manifest) return [`no prebuilds/ at all: ${rebuild}`]
  let sourcesTime = 0
  for (const rel of SOURCES) {
    const p = join(root, rel)
    if (!existsSync(p)) continue
    sourcesTime = Math.max(sourcesTime, statSync(p).isDirectory() ? newestAny(p) : statSync(p).mtimeMs)
  }
  for (const { platform, libc, minors } of platforms) {
    const parts = [...COMMON_PARTS, ...minors.map((m) => `vis_py${m.replace('.', '')}`)]
    for (const part of parts) {
      const entry = manifest.files.find(
        (f) => f.part === part && f.platform === platform && (f.libc ?? 'glibc') === libc,
      )
      const what = part.startsWith('vis_py')
        ? `the runtime addon for Python 3.${part.slice(7)} (${part})`
        : part
      if (!entry) {
        problems.push(`no prebuild of ${what} for ${platform} ${libc}: ${rebuild}`)
        continue
      }
      const file = join(root, 'prebuilds', entry.path)
      if (existsSync(file) && statSync(file).mtimeMs < sourcesTime)
        problems.push(
          `prebuilds/${entry.path} (${what}, ${platform}) is older than native/: rebuild it (\`npm run release:pack\`)`,
        )
    }
  }
  return problems
}

function newestAny(dir) {
  let best = 0
  for (const ext of ['.cc', '.h', '.c', '.txt', '.cmake']) best = Math.max(best, newest(dir, ext))
  return best
}
