// Where addons are found, and the policy-tightening rules, without starting Python.
import assert from 'node:assert/strict'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, statSync, utimesSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { addonFile, runtimeAddonName, runtimeAddonPath } from '../../src/native/addon.js'
import { type AuditPolicy, loosening, resolvePath } from '../../src/native/audit-policy.js'
import { PREBUILT_ADDON_FILE, partPlatformDir, prebuiltAddon } from '../../src/native/locate.js'
import { repoRoot, tempHome } from './helpers.js'

tempHome()
const release = join(repoRoot, 'build', 'Release')

test('VIS_ADDON_DIR is searched first; names it lacks come from the prebuild or the local build', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vis-addons-'))
  copyFileSync(join(release, 'vis_loader.node'), join(dir, 'vis_loader.node'))
  utimesSync(join(dir, 'vis_loader.node'), new Date(0), new Date(0)) // older than the build: still wins
  process.env.VIS_ADDON_DIR = dir
  try {
    assert.equal(addonFile('vis_loader'), join(dir, 'vis_loader.node'))
    // A name VIS_ADDON_DIR lacks comes from the prebuild (node-gyp-build's pick in
    // prebuilds/<name>/) or build/Release, whichever is newer.
    const minor = process.env.VIS_PYTHON_VERSION ?? '3.11'
    const name = runtimeAddonName(minor)
    const options = [prebuiltAddon(name), join(release, `${name}.node`)].filter(
      (f): f is string => f !== undefined && existsSync(f),
    )
    assert.ok(options.length > 0)
    const newest = options.reduce((a, b) => (statSync(b).mtimeMs > statSync(a).mtimeMs ? b : a))
    assert.equal(runtimeAddonPath(minor), newest)
    assert.equal(addonFile('vis_nothing'), undefined)
    assert.throws(() => runtimeAddonPath('3.9'), { code: 'native.addon-missing' })
  } finally {
    delete process.env.VIS_ADDON_DIR
  }
})

test('a prebuild is picked by node-gyp-build from prebuilds/<part>/prebuilds/<platform>-<arch>/', () => {
  const root = mkdtempSync(join(tmpdir(), 'vis-prebuilds-'))
  const platformDir = partPlatformDir('vis_loader', root)
  mkdirSync(platformDir, { recursive: true })
  // Tags for another libc and another ABI do not match this Node; the N-API glibc file does.
  copyFileSync(join(release, 'vis_loader.node'), join(platformDir, 'node.napi.musl.node'))
  copyFileSync(join(release, 'vis_loader.node'), join(platformDir, 'node.abi1.node'))
  const require = createRequire(import.meta.url)
  const ngb = require('node-gyp-build') as { resolve(dir: string): string }
  assert.throws(() => ngb.resolve(join(root, 'vis_loader')), /No native build was found/)
  copyFileSync(join(release, 'vis_loader.node'), join(platformDir, PREBUILT_ADDON_FILE))
  assert.equal(ngb.resolve(join(root, 'vis_loader')), join(platformDir, PREBUILT_ADDON_FILE))
})

const base: AuditPolicy = {
  readOnly: ['/data'],
  readWrite: ['/work'],
  network: { enabled: true, allow: ['api.example.com:443', '*.internal'] },
  processes: true,
  ctypes: false,
}

test('tightening is accepted and every kind of loosening is named', () => {
  assert.equal(
    loosening(base, { ...base, readWrite: ['/work/sub'], readOnly: ['/work/x', '/data/y'] }),
    undefined,
  )
  assert.equal(loosening(base, { ...base, network: { enabled: true, allow: ['*.internal'] } }), undefined)
  assert.equal(loosening(base, { ...base, network: { enabled: false }, processes: false }), undefined)
  assert.match(loosening(base, { ...base, readWrite: ['/'] }) ?? '', /read-write \/ is not inside/)
  assert.match(loosening(base, { ...base, readOnly: ['/etc'] }) ?? '', /read-only \/etc/)
  assert.match(loosening(base, { ...base, network: { enabled: true } }) ?? '', /allow list/)
  assert.match(
    loosening(base, { ...base, network: { enabled: true, allow: ['evil.com'] } }) ?? '',
    /evil\.com/,
  )
  assert.match(loosening(base, { ...base, ctypes: true }) ?? '', /ctypes/)
  assert.match(
    loosening({ ...base, network: { enabled: false } }, { ...base, network: { enabled: true } }) ?? '',
    /disabled/,
  )
})

test('policy paths resolve symlinks and paths that do not exist yet', () => {
  const dir = resolvePath(mkdtempSync(join(tmpdir(), 'vis-pol-')))
  assert.equal(resolvePath(join(dir, 'a', '..', 'b', 'new')), join(dir, 'b', 'new'))
  assert.equal(resolvePath(join(dir, '.')), dir)
})
