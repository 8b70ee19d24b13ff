// The wheel step of `vis runtime stage --with` (fourteenth outsider pass): a wheel that installs a
// module site.py runs at every start (sitecustomize/usercustomize, as a module or a package) is
// refused, naming the wheel, and nothing lands in site-packages; a wheel directory inside a session
// root is refused like a `--from-archive` file there (dist.source-in-root); a clean wheel beside
// it still installs. Real pip, real wheels.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, realpathSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { installWheels } from '../../src/distribution/packages/wheels.js'
import type { VisError } from '../../src/util/errors.js'
import { noteSessionRoot } from '../../src/util/host-programs.js'
import { MINOR, tempDir } from './helpers.js'

const scratch: string[] = []
after(() => {
  for (const d of scratch) rmSync(d, { recursive: true, force: true })
})

function fresh(prefix: string): string {
  const d = realpathSync(tempDir(prefix))
  scratch.push(d)
  return d
}

// A wheel `name`-1.0 in dir holding name/__init__.py and the extra files given.
function wheel(dir: string, name: string, extra: Record<string, string>): void {
  const files = {
    [`${name}/__init__.py`]: 'X = 1\n',
    ...extra,
    [`${name}-1.0.dist-info/METADATA`]: `Metadata-Version: 2.1\nName: ${name}\nVersion: 1.0\n`,
    [`${name}-1.0.dist-info/WHEEL`]:
      'Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n',
    [`${name}-1.0.dist-info/RECORD`]: '',
  }
  const py = [
    'import json, sys, zipfile',
    "z = zipfile.ZipFile(sys.argv[1], 'w')",
    'for k, v in json.loads(sys.argv[2]).items(): z.writestr(k, v)',
    'z.close()',
  ].join('\n')
  const r = spawnSync('python3', ['-c', py, join(dir, `${name}-1.0-py3-none-any.whl`), JSON.stringify(files)])
  assert.equal(r.status, 0, String(r.stderr))
}

const install = (name: string, site: string, dir: string) =>
  installWheels([name], MINOR, site, { indexUrl: dir }, { onProgress: () => {} })

for (const [label, extra] of [
  ['sitecustomize.py', { 'sitecustomize.py': 'import os\n' }],
  ['a usercustomize package', { 'usercustomize/__init__.py': 'import os\n' }],
  ['a sitecustomize extension module', { 'sitecustomize.cpython-311-x86_64-linux-gnu.so': '' }],
] as const) {
  test(`a wheel installing ${label} is refused, naming it, and nothing is installed`, async () => {
    const dir = fresh('vis-wheels-hook-')
    const site = fresh('vis-wheels-hook-site-')
    wheel(dir, 'hookpkg', extra)
    await assert.rejects(install('hookpkg', site, dir), (e: VisError) => {
      assert.equal(e.code, 'dist.wheel-startup-hook', e.message)
      assert.match(e.message, /hookpkg 1\.0/, 'the wheel is named')
      assert.match(e.message, /(site|user)customize/)
      return true
    })
    assert.deepEqual(readdirSync(site), [], 'nothing reached site-packages')
  })
}

test('a wheel directory inside a session root is refused (dist.source-in-root); outside, a clean wheel installs', async () => {
  const root = fresh('vis-wheels-root-')
  noteSessionRoot(root)
  const inRoot = join(root, 'wheels')
  mkdirSync(inRoot)
  wheel(inRoot, 'cleanpkg', {})
  const site = fresh('vis-wheels-root-site-')
  await assert.rejects(install('cleanpkg', site, inRoot), (e: VisError) => {
    assert.equal(e.code, 'dist.source-in-root', e.message)
    assert.equal(e.context.root, root)
    return true
  })
  assert.deepEqual(readdirSync(site), [])
  const outside = fresh('vis-wheels-outside-')
  wheel(outside, 'cleanpkg', {})
  assert.deepEqual(await install('cleanpkg', site, outside), ['cleanpkg 1.0 (wheel)'])
  assert.ok(existsSync(join(site, 'cleanpkg', '__init__.py')))
})
