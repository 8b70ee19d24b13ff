#!/usr/bin/env node
// `npm run release:pack [-- --out DIR]`: the whole release sequence, each step skipped when its
// result is already current (so CI, which has built and staged, pays only for what changed):
//   build (when dist/ is older than src/), stage every supported Python minor not yet staged
//   (from this machine's CPython), build the addons, lay out the prebuilds, check them
//   (release-check.mjs: refuses, naming what is missing), then `npm pack` into DIR (default .).
// Then, for every other platform of the seam (issue 37: linux-aarch64-gnu), the same with its cross
// toolchain: its CPython staged from Debian's packages for that architecture, its parts cross-built
// into build/<tuple>/Release and laid out under prebuilds/<part>/prebuilds/<tuple>/.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { distProblems, supportedMinors } from './package-checks.mjs'

const root = resolve(fileURLToPath(new URL('..', import.meta.url)))
const { values } = parseArgs({ options: { out: { type: 'string', default: '.' } } })
const out = resolve(values.out)

function step(title, cmd, args) {
  console.log(`release:pack: ${title}`)
  const t0 = Date.now()
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' })
  if (r.status !== 0) {
    console.error(`release:pack: ${title} failed (${cmd} ${args.join(' ')}); nothing was packed`)
    process.exit(r.status ?? 1)
  }
  // CI reads these to see what each platform's share of the release costs.
  console.log(`release:pack: ${title}: ${((Date.now() - t0) / 1000).toFixed(1)} s`)
}

function staged(minor, tag) {
  const dir = join(root, 'cpython-dist', minor)
  if (!existsSync(dir)) return false
  return readdirSync(dir).some(
    (p) => (!tag || p === tag) && existsSync(join(dir, p, 'python', 'vis-dist.json')),
  )
}

if (distProblems(root).length) step('build (dist/ is older than src/)', 'npm', ['run', 'build'])
else console.log('release:pack: build: dist/ is current')
const seam = await import(pathToFileURL(join(root, 'dist', 'distribution', 'platform.js')).href)
for (const minor of await supportedMinors(root)) {
  if (staged(minor, seam.hostTarget().tag)) console.log(`release:pack: stage: CPython ${minor} is staged`)
  else
    step(
      `stage CPython ${minor} (a shared-library CPython ${minor} must be installed, e.g. pyenv's)`,
      process.execPath,
      [join(root, 'bin', 'vis.js'), 'runtime', 'stage', '--python', minor],
    )
}
step('build the addons for every staged minor', 'npm', ['run', 'build:addon'])
step('lay out the prebuilds', 'npm', ['run', 'prebuildify', '--', '--no-build'])
for (const t of seam.TARGETS) {
  if (t.tag === seam.hostTarget().tag) continue
  for (const minor of t.minors) {
    if (staged(minor, t.tag)) console.log(`release:pack: stage: CPython ${minor} for ${t.tag} is staged`)
    else
      step(
        `stage CPython ${minor} for ${t.tag} (Debian's ${t.debianArch} packages; dpkg --add-architecture ${t.debianArch})`,
        process.execPath,
        [join(root, 'bin', 'vis.js'), 'runtime', 'stage', '--platform', t.tag, '--python', minor],
      )
  }
  step(`cross-build the parts for ${t.tag} (${t.crossTriple}-g++)`, process.execPath, [
    join(root, 'scripts', 'build-addon.mjs'),
    '--platform',
    t.tag,
  ])
  step(`lay out the ${t.nodeTuple} prebuilds`, process.execPath, [
    join(root, 'scripts', 'prebuild.mjs'),
    '--no-build',
    '--platform',
    t.tag,
  ])
}
step('check the release', process.execPath, [join(root, 'scripts', 'release-check.mjs')])
mkdirSync(out, { recursive: true })
step(`pack into ${out}`, 'npm', ['pack', '--pack-destination', out])
