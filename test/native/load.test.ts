// Loading: the loader per staged minor, refusals before anything native runs
// (version mismatch, missing addon, bad home), init failure, and exit while busy.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { resolveDistribution } from '../../src/distribution/resolve.js'
import { needs } from '../helpers/needs.js'
import { fixtures, runTs, tempHome } from './helpers.js'

tempHome()
const stagedDir = join(import.meta.dirname, '..', '..', 'cpython-dist')
const staged = existsSync(stagedDir) ? readdirSync(stagedDir).filter((n) => /^3\.\d+$/.test(n)) : []

async function tryLoad(dist?: object): Promise<any> {
  const r = await runTs(join(fixtures, 'load.ts'), dist ? [JSON.stringify(dist)] : [])
  const line = r.stdout.trim().split('\n').at(-1)
  assert.ok(line, `no result line; stderr: ${r.stderr}`)
  return { ...JSON.parse(line!), code_: r.code, stderr: r.stderr }
}

test('the loader reports the right version for each staged minor', async () => {
  assert.ok(staged.length > 0, 'no staged distribution under cpython-dist/')
  for (const minor of staged) {
    const dist = await resolveDistribution({ minor })
    const r = await runTs(join(fixtures, 'loader-version.ts'), [dist.libpython])
    assert.equal(r.code, 0, r.stderr)
    const out = JSON.parse(r.stdout)
    assert.ok(out.version.startsWith(`${dist.version} `), `${out.version} vs ${dist.version}`)
    assert.equal(out.path, dist.libpython)
  }
})

test('the resolved distribution starts and reports its version', async () => {
  const dist = await resolveDistribution()
  const r = await tryLoad()
  assert.equal(r.ok, true, JSON.stringify(r))
  assert.equal(r.version, dist.version)
  assert.ok(r.sysVersion.startsWith(dist.version))
})

test('a distribution whose libpython is another minor is refused before the addon loads', {
  skip: needs(
    staged.length >= 2,
    "a second CPython minor staged (e.g. pyenv's 3.12)",
    'node bin/vis.js runtime stage --python 3.12',
  ),
}, async () => {
  const dist = await resolveDistribution()
  const other = staged.find((m) => m !== dist.minor)
  assert.ok(other, 'needs two staged minors')
  const otherDist = await resolveDistribution({ minor: other })
  // A mislabelled tree: the other minor's stdlib and name, this minor's libpython.
  const root = mkdtempSync(join(tmpdir(), 'vis-mixed-'))
  mkdirSync(join(root, 'lib'))
  symlinkSync(join(otherDist.root, 'lib', `python${other}`), join(root, 'lib', `python${other}`))
  const lib = join(root, 'lib', `libpython${other}.so.1.0`)
  symlinkSync(dist.libpython, lib)
  const r = await tryLoad({ ...otherDist, root, libpython: lib })
  assert.equal(r.ok, false)
  assert.equal(r.code, 'native.version-mismatch', JSON.stringify(r))
  assert.match(
    r.message,
    new RegExp(`is Python ${dist.minor.replace('.', '\\.')}\\.\\d+, but the distribution says ${other}`),
  )
  assert.equal(r.code_, 0, 'refused cleanly, no crash')
})

test('a minor with no built addon is refused naming the build command', async () => {
  const dist = await resolveDistribution()
  const r = await tryLoad({ ...dist, minor: '3.10' })
  assert.equal(r.ok, false)
  assert.equal(r.code, 'native.addon-missing')
  assert.match(r.message, /vis_py310\.node.*npm run build:addon/)
})

test('a distribution without a usable home gives a clear error', async () => {
  const dist = await resolveDistribution()
  const empty = mkdtempSync(join(tmpdir(), 'vis-badhome-'))
  const r = await tryLoad({ ...dist, root: empty })
  assert.equal(r.ok, false)
  assert.equal(r.code, 'native.bad-home')
  assert.match(r.message, /os\.py is missing/)
})

test('a home that passes the checks but cannot initialise reports init-failed', async () => {
  const dist = await resolveDistribution()
  const root = mkdtempSync(join(tmpdir(), 'vis-brokenhome-'))
  const stdlib = join(root, 'lib', `python${dist.minor}`)
  mkdirSync(join(stdlib, 'encodings'), { recursive: true })
  writeFileSync(join(stdlib, 'os.py'), 'raise ImportError("broken os")\n')
  writeFileSync(join(stdlib, 'encodings', '__init__.py'), 'raise ImportError("broken encodings")\n')
  symlinkSync(dist.libpython, join(root, 'lib', `libpython${dist.minor}.so.1.0`))
  const r = await tryLoad({ ...dist, root, libpython: join(root, 'lib', `libpython${dist.minor}.so.1.0`) })
  assert.equal(r.ok, false)
  assert.equal(r.code, 'native.init-failed', JSON.stringify(r))
  assert.match(r.message, /failed to initialise/)
  assert.equal(r.code_, 0)
})

test('process.exit() while Python is busy exits promptly with its code', async () => {
  for (const mode of ['spin', 'sleep']) {
    const r = await runTs(join(fixtures, 'busy-exit.ts'), [mode], { timeoutMs: 15000 })
    assert.equal(r.signal, null, `${mode}: the process hung and was killed`)
    assert.equal(r.code, 7, `${mode}: ${r.stderr}`)
    assert.match(r.stdout, /exiting/)
  }
})
