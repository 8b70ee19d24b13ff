// Where addons are found, and the policy-tightening rules, without starting Python.
import assert from 'node:assert/strict'
import { copyFileSync, existsSync, mkdtempSync, utimesSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { addonDirs, addonFile, runtimeAddonPath } from '../../src/native/addon.js'
import { loosening, type Policy, resolvePath } from '../../src/native/policy.js'
import { repoRoot, tempHome } from './helpers.js'

tempHome()
const release = join(repoRoot, 'build', 'Release')

test('VIS_ADDON_DIR is searched first; names it lacks come from build/Release', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vis-addons-'))
  copyFileSync(join(release, 'vis_loader.node'), join(dir, 'vis_loader.node'))
  utimesSync(join(dir, 'vis_loader.node'), new Date(0), new Date(0)) // older than the build: still wins
  process.env.VIS_ADDON_DIR = dir
  try {
    assert.equal(addonFile('vis_loader'), join(dir, 'vis_loader.node'))
    // A name VIS_ADDON_DIR lacks comes from the next directory that has it (prebuilds,
    // made by `npm run build`, come before the local build).
    const name = `vis_py${(process.env.VIS_PYTHON_VERSION ?? '3.11').replace('.', '')}.node`
    const next = addonDirs()
      .slice(1)
      .find((d) => existsSync(join(d, name)))
    assert.ok(next)
    assert.equal(runtimeAddonPath(process.env.VIS_PYTHON_VERSION ?? '3.11'), join(next, name))
    assert.equal(addonFile('vis_nothing'), undefined)
    assert.throws(() => runtimeAddonPath('3.9'), { code: 'native.addon-missing' })
  } finally {
    delete process.env.VIS_ADDON_DIR
  }
})

const base: Policy = {
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
