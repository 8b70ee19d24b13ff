#!/usr/bin/env node
// What `npm install` runs: build the TypeScript when dist/ is stale, stage
// CPython 3.11 from a local shared-library install when none is staged, then
// build the addon. Each step says what it does; a failing step fails the install.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const say = (msg) => console.log(`vis-runtime postinstall: ${msg}`)

function fail(step, detail) {
  console.error(`vis-runtime postinstall: ${step} failed${detail ? `: ${detail}` : ''}`)
  console.error('Fix the cause above and run `npm install` (or `node scripts/postinstall.mjs`) again.')
  process.exit(1)
}

function newest(dir, ext) {
  let best = 0
  if (!existsSync(dir)) return best
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name)
    if (entry.isDirectory()) best = Math.max(best, newest(p, ext))
    else if (entry.name.endsWith(ext)) best = Math.max(best, statSync(p).mtimeMs)
  }
  return best
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
  }
} else if (!existsSync(join(dist, 'cli', 'main.js'))) {
  fail('build', 'neither src/ nor dist/cli/main.js is present')
}

// (b) CPython 3.11 beside the package.
const staged = join(root, 'cpython-dist', '3.11')
if (existsSync(staged)) {
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

// (c) The native addon, once its build script exists.
const buildAddon = join(root, 'scripts', 'build-addon.mjs')
if (existsSync(buildAddon)) run('addon', process.execPath, [buildAddon])
else say('scripts/build-addon.mjs is not there yet; no addon to build')
say('done')
