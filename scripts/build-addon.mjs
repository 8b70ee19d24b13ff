#!/usr/bin/env node
// Builds the native addons with cmake-js in ONE build: build/Release/vis_loader.node
// and one build/Release/vis_py3XX.node per Python distribution, each compiled against
// that distribution's headers (never linked to libpython).
//   node scripts/build-addon.mjs                 every staged cpython-dist/<minor>/<platform>/python
//                                                (else every cached ~/.vis/python/runtime/<minor>/...)
//   node scripts/build-addon.mjs ROOT [ROOT...]  these distribution roots (bin/ lib/ include/)
//   node scripts/build-addon.mjs --platform linux-aarch64-gnu
//                                                another platform's parts with its cross toolchain
//                                                (<triple>-gcc/g++), against the trees staged for it
//                                                (`vis runtime stage --platform ...`), into
//                                                build/<node tuple>/Release (issue 37)
// VIS_ADDON_PYTHONS (colon-separated roots) is read when no roots are given and nothing is staged.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const { values: opts, positionals } = parseArgs({
  options: { platform: { type: 'string' } },
  allowPositionals: true,
  strict: false,
})
// The platform seam (dist/distribution/platform.js): the target asked for, else this machine's
// tag (a checkout's first build may run before dist/ exists: then any tree of this OS is taken).
const seamFile = join(root, 'dist', 'distribution', 'platform.js')
const seam = existsSync(seamFile) ? await import(pathToFileURL(seamFile).href) : undefined
const cross = opts.platform ? seam.targetFor(opts.platform) : undefined
const wantTag = cross?.tag ?? seam?.hostTarget().tag

// Staged beside the package (a checkout), else in the per-user cache (an installed package
// building from source after `vis runtime fetch`).
function stagedRoots() {
  const staged = rootsUnder(join(root, 'cpython-dist'))
  if (staged.length) return staged
  return rootsUnder(join(process.env.VIS_HOME || join(homedir(), '.vis'), 'python', 'runtime'))
}

function rootsUnder(dist) {
  if (!existsSync(dist)) return []
  const out = []
  for (const minor of readdirSync(dist).filter((n) => /^3\.\d+$/.test(n))) {
    for (const platform of readdirSync(join(dist, minor))) {
      // A tree staged for another architecture is not this machine's (its headers differ).
      if (wantTag ? platform !== wantTag : !platform.startsWith(`${process.platform}-`)) continue
      const py = join(dist, minor, platform, 'python')
      if (existsSync(join(py, 'include'))) out.push(py)
    }
  }
  return out
}

// The minor from the manifest when there is one, else from include/python3.X.
function describe(distRoot) {
  const manifest = join(distRoot, 'vis-dist.json')
  let minor
  if (existsSync(manifest)) minor = JSON.parse(readFileSync(manifest, 'utf8')).minor
  const includes = existsSync(join(distRoot, 'include'))
    ? readdirSync(join(distRoot, 'include')).filter((n) => /^python3\.\d+$/.test(n))
    : []
  minor ??= includes[0]?.slice('python'.length)
  const include = join(distRoot, 'include', `python${minor}`)
  if (!minor || !existsSync(join(include, 'Python.h'))) {
    throw new Error(`${distRoot}: no include/python3.X/Python.h; is it a CPython distribution root?`)
  }
  return { root: distRoot, minor, include }
}

let roots = positionals.map((a) => resolve(a))
if (roots.length === 0) roots = stagedRoots()
if (roots.length === 0 && process.env.VIS_ADDON_PYTHONS) roots = process.env.VIS_ADDON_PYTHONS.split(':')
if (roots.length === 0) {
  console.error(
    'build-addon: no CPython distribution staged under cpython-dist/. Stage one first ' +
      '(`node bin/vis.js runtime stage --python 3.11`) or pass distribution roots as arguments.',
  )
  process.exit(1)
}

const byMinor = new Map()
for (const r of roots) {
  const d = describe(r)
  if (!byMinor.has(d.minor)) byMinor.set(d.minor, d)
}
const targets = [...byMinor.values()].map((d) => `${d.minor}=${d.include}`).join(';')
for (const d of byMinor.values())
  console.log(`build-addon: vis_py${d.minor.replace('.', '')} <- ${d.include}`)

// A cross build gets its own build directory and the target's compilers.
const buildDir = cross ? join(root, 'build', cross.nodeTuple) : join(root, 'build')
const crossArgs = cross
  ? [
      `--CDCMAKE_C_COMPILER=${cross.crossTriple}-gcc`,
      `--CDCMAKE_CXX_COMPILER=${cross.crossTriple}-g++`,
      '--CDCMAKE_SYSTEM_NAME=Linux',
      `--CDCMAKE_SYSTEM_PROCESSOR=${cross.seccompArch}`,
    ]
  : []
const cmakeJs = join(dirname(require.resolve('cmake-js/package.json')), 'bin', 'cmake-js')
const env = { ...process.env }
delete env.LD_BIND_NOW
// `cmake-js build` configures only once; configuring every time makes a newly staged
// minor (a new VIS_PYTHON_TARGETS) reach the build. Compilation stays incremental.
function cmakeJsStep(step) {
  const r = spawnSync(
    process.execPath,
    [
      cmakeJs,
      step,
      '--directory',
      root,
      '--out',
      buildDir,
      '--CDVIS_PYTHON_TARGETS=' + targets,
      ...crossArgs,
      '--log-level',
      'warn',
    ],
    { cwd: root, stdio: 'inherit', env },
  )
  if (r.status !== 0) process.exit(r.status ?? 1)
}
cmakeJsStep('configure')
cmakeJsStep('build')
