#!/usr/bin/env node
// What `npm install` runs.
// In a checkout (src/ is there): build the TypeScript when dist/ is stale, stage CPython
// 3.11 from a local shared-library install when none is staged, build the addons.
// In an installed package (no src/): use the shipped prebuilds when they match this
// machine and compile NOTHING; only when none match, build from source with cmake-js.
// Both end with the `vis doctor` summary: what is missing, how to install it, what fails
// until then. Each step says what it does; a failing step fails the install.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { newest } from './tree-times.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const say = (msg) => console.log(`vis-runtime postinstall: ${msg}`)

function fail(step, detail) {
  console.error(`vis-runtime postinstall: ${step} failed${detail ? `: ${detail}` : ''}`)
  console.error('Fix the cause above and run `npm install` (or `node scripts/postinstall.mjs`) again.')
  process.exit(1)
}

function run(step, cmd, args) {
  say(`${step}: ${cmd} ${args.join(' ')}`)
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' })
  if (r.error) fail(step, r.error.message)
  if (r.status !== 0) fail(step, `exit code ${r.status ?? r.signal}`)
}

// (a) TypeScript. An installed package ships dist/ and has no src/.
const src = join(root, 'src')
const dist = join(root, 'dist')
if (existsSync(src)) {
  const stale = !existsSync(join(dist, 'cli', 'main.js')) || newest(src, '.ts') > newest(dist, '.js')
  if (!stale) say('dist/ is up to date with src/')
  else {
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
    if (!existsSync(tsc)) fail('build', 'dist/ is missing or stale and typescript is not installed')
    run('build', process.execPath, [tsc, '-p', 'tsconfig.json'])
    // The worker entry as one file (a faster cold start); workers fall back to child.js without it.
    if (existsSync(join(dist, 'worker', 'child.js'))) {
      run('bundle the worker', process.execPath, [join(root, 'scripts', 'bundle-worker.mjs')])
    }
  }
} else if (!existsSync(join(dist, 'cli', 'main.js'))) {
  fail('build', 'neither src/ nor dist/cli/main.js is present')
}

// (b) CPython 3.11 beside the package.
const staged = join(root, 'cpython-dist', '3.11')
if (!existsSync(src)) {
  // Staging from a local CPython is a maintainer's path (strip, patchelf, apt); a consumer's
  // CPython comes from the release location on first use.
  say(
    'CPython is fetched on first use (or by `npx vis runtime fetch --python 3.X`) from VIS_PYTHON_DIST_URL into ~/.vis',
  )
} else if (existsSync(staged)) {
  say(`CPython 3.11 is already staged in ${staged}`)
} else {
  const { findLocalPython } = await import(join(dist, 'distribution', 'discover.js'))
  const local = findLocalPython('3.11')
  if (!local) {
    say(
      'no local shared-library CPython 3.11 found (pyenv or the system); skipping staging. ' +
        'The runtime will download a distribution on first use, or run `vis runtime stage --python 3.11` later.',
    )
  } else {
    const { stageFromPython } = await import(join(dist, 'distribution', 'stage.js'))
    const onProgress = (e) => {
      if (e.done === undefined) say(`${e.step}: ${e.detail ?? ''}`)
    }
    // pytest comes from Debian's packages when apt can fetch them; without it
    // the tree is still complete, and `vis runtime stage --with pytest` adds it.
    const withApt = spawnSync('sh', ['-c', 'command -v apt-get && command -v dpkg-deb'], { stdio: 'ignore' })
    let withPytest = withApt.status === 0
    say(`staging CPython ${local.version} from ${local.prefix}${withPytest ? ' with pytest' : ''}`)
    try {
      await stageFromPython(local.executable, { withPytest, onProgress })
    } catch (err) {
      if (withPytest && err?.code === 'dist.pytest') {
        say(`pytest could not be added (${err.message}); staging without it`)
        withPytest = false
        try {
          await stageFromPython(local.executable, { withPytest, onProgress })
        } catch (err2) {
          fail('stage', err2?.message ?? String(err2))
        }
      } else fail('stage', err?.message ?? String(err))
    }
  }
}

// (c) The native parts.
const buildAddon = join(root, 'scripts', 'build-addon.mjs')
if (existsSync(src)) {
  if (existsSync(buildAddon)) run('addon', process.execPath, [buildAddon])
  else say('scripts/build-addon.mjs is not there yet; no addon to build')
} else {
  const { matchPrebuilds, prebuildTuple } = await import(join(dist, 'native', 'locate.js'))
  const { SUPPORTED_MINORS } = await import(join(dist, 'distribution', 'platform.js'))
  const m = matchPrebuilds(SUPPORTED_MINORS)
  const tuple = prebuildTuple()
  if (m.missing.length === 0 && m.minors.length > 0) {
    say(`prebuilt native parts for ${tuple} (Python ${m.minors.join(', ')}); nothing to compile`)
  } else {
    say(
      `no prebuilt ${[...m.missing, ...(m.minors.length ? [] : ['runtime addon'])].join(', ')} for ${tuple} ` +
        `(Node-API 8, ${existsSync('/etc/alpine-release') ? 'musl' : 'glibc'}): building from source`,
    )
    sourceBuild()
  }
}

// The fallback: cmake-js (an optional dependency) drives cmake and a C++ compiler against
// the headers of a staged or cached CPython.
function sourceBuild() {
  const steps =
    'Building from source needs cmake >= 3.15, a C++17 compiler and make ' +
    '(Debian/Ubuntu: sudo apt-get install -y cmake g++ make), the cmake-js package ' +
    '(npm install cmake-js@8 if optional dependencies were skipped), and the headers of a CPython: ' +
    'run `npx vis runtime fetch --python 3.11`, then `npm rebuild vis-runtime`.'
  try {
    createRequire(import.meta.url).resolve('cmake-js/package.json')
  } catch {
    fail('addon', `cmake-js is not installed. ${steps}`)
  }
  const r = spawnSync(process.execPath, [buildAddon], { cwd: root, stdio: 'inherit' })
  if (r.status !== 0) fail('addon', `the source build failed. ${steps}`)
}

// (d) What this machine lacks for confined sessions. Never fails the install.
try {
  const { probe } = await import(join(dist, 'confinement', 'probe.js'))
  const { summaryLines } = await import(join(dist, 'confinement', 'advice.js'))
  say('system check (`npx vis doctor` for details):')
  for (const line of summaryLines(probe({ fresh: true }).checks)) console.log(`  ${line}`)
} catch (err) {
  say(`system check skipped: ${err?.message ?? err}; run \`npx vis doctor\``)
}
say('done')
