// The wheel path: packages from a package index (PEP 503, served on loopback) or a
// directory of wheels, for any minor. The wheels are built here, by hand, as a package
// index would serve them.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { findLocalPython } from '../../src/distribution/discover.js'
import { defaultDistDir, stagedTreeRoot, treePaths } from '../../src/distribution/layout.js'
import { readDistManifest } from '../../src/distribution/manifest.js'
import { parseWith } from '../../src/distribution/packages/sets.js'
import { installWheels } from '../../src/distribution/packages/wheels.js'
import { platformTag } from '../../src/distribution/platform.js'
import { noProgress } from '../../src/distribution/progress.js'
import { stageFromPython } from '../../src/distribution/stage.js'
import { cleanPythonEnv } from '../../src/distribution/tools.js'
import { cliEnv, runCli } from '../distribution/helpers.js'
import { needs } from '../helpers/needs.js'

const scratch: string[] = []
const temp = (p: string) => {
  const d = mkdtempSync(join(tmpdir(), p))
  scratch.push(d)
  return d
}
let wheels: string
let server: Server
let index: string
const host = findLocalPython('3.11')

// A pure-Python wheel: the package, its dist-info, zipped.
function buildWheel(
  dir: string,
  name: string,
  version: string,
  files: Record<string, string>,
  requires: string[] = [],
) {
  const src = mkdtempSync(join(tmpdir(), 'vis-wheel-src-'))
  const info = `${name}-${version}.dist-info`
  const all: Record<string, string> = {
    ...files,
    [`${info}/METADATA`]: `Metadata-Version: 2.1\nName: ${name}\nVersion: ${version}\nSummary: ${name} for the wheel tests\n${requires.map((r) => `Requires-Dist: ${r}\n`).join('')}`,
    [`${info}/WHEEL`]: 'Wheel-Version: 1.0\nGenerator: vis-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n',
  }
  const record = [...Object.keys(all).map((f) => `${f},,`), `${info}/RECORD,,`].join('\n')
  all[`${info}/RECORD`] = `${record}\n`
  for (const [f, text] of Object.entries(all)) {
    mkdirSync(join(src, f, '..'), { recursive: true })
    writeFileSync(join(src, f), text)
  }
  const top = [...new Set(Object.keys(all).map((f) => f.split('/')[0]!))]
  const whl = join(dir, `${name}-${version}-py3-none-any.whl`)
  execFileSync('python3', ['-m', 'zipfile', '-c', whl, ...top], { cwd: src })
  rmSync(src, { recursive: true, force: true })
  return whl
}

before(async () => {
  wheels = temp('vis-wheels-')
  buildWheel(
    wheels,
    'visdemo',
    '1.0',
    { 'visdemo/__init__.py': 'from visdep import twice\n\ndef hello():\n    return f"hello {twice(21)}"\n' },
    ['visdep>=2'],
  )
  buildWheel(wheels, 'visdep', '2.0', {
    'visdep/__init__.py': 'def twice(x):\n    return 2 * x\n',
    'visdep-hook.pth': 'import os; os.environ["PLANTED"] = "1"\n',
  })
  buildWheel(wheels, 'visdep', '1.0', { 'visdep/__init__.py': 'def twice(x):\n    return x\n' })
  // A PEP 503 simple index over the directory.
  server = createServer((req, res) => {
    const m = /^\/simple\/([^/]+)\/$/.exec(req.url ?? '')
    if (m) {
      const files = readdirSync(wheels).filter((f) => f.startsWith(`${m[1]}-`))
      if (files.length === 0) {
        res.statusCode = 404
        return res.end()
      }
      res.setHeader('content-type', 'text/html')
      return res.end(
        `<html><body>${files.map((f) => `<a href="/files/${f}">${f}</a>`).join('\n')}</body></html>`,
      )
    }
    const f = /^\/files\/([^/]+\.whl)$/.exec(req.url ?? '')
    if (f && existsSync(join(wheels, f[1]!))) return res.end(readFileSync(join(wheels, f[1]!)))
    res.statusCode = 404
    res.end()
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  index = `http://127.0.0.1:${(server.address() as AddressInfo).port}/simple/`
})

after(() => {
  server?.close()
  for (const d of scratch) rmSync(d, { recursive: true, force: true })
})

function importWith(python: string, site: string): string {
  return execFileSync(
    python,
    [
      '-I',
      '-c',
      'import sys; sys.path.insert(0, sys.argv[1]); import os, visdemo; print(visdemo.hello(), os.environ.get("PLANTED"))',
      site,
    ],
    {
      env: cleanPythonEnv(),
      encoding: 'utf8',
    },
  ).trim()
}

describe('wheels from an index', () => {
  const py312 = treePaths(stagedTreeRoot(defaultDistDir(), '3.12', platformTag()), '3.12').executable
  test('for 3.12: pip resolves the dependency from the loopback index; no .pth file is installed', {
    skip: needs(
      existsSync(py312),
      "CPython 3.12 staged (from pyenv's 3.12)",
      'node bin/vis.js runtime stage --python 3.12',
    ),
  }, async () => {
    const site = temp('vis-site-')
    const labels = await installWheels(
      ['visdemo'],
      '3.12',
      site,
      { indexUrl: index },
      { python: host?.executable, onProgress: noProgress },
    )
    assert.deepEqual(labels, ['visdemo 1.0 (wheel)', 'visdep 2.0 (wheel)'])
    assert.deepEqual(
      readdirSync(site).filter((n) => n.endsWith('.pth')),
      [],
    )
    assert.equal(importWith(py312, site), 'hello 42 None')
  })

  test('from a directory of wheels, with a version constraint', async () => {
    const site = temp('vis-site-')
    const labels = await installWheels(
      ['visdep<2'],
      '3.11',
      site,
      { indexUrl: wheels },
      { python: host?.executable, onProgress: noProgress },
    )
    assert.deepEqual(labels, ['visdep 1.0 (wheel)'])
  })

  test('an unknown package or a bad source is a clear error', async () => {
    const site = temp('vis-site-')
    await assert.rejects(
      installWheels(
        ['no-such-pkg'],
        '3.11',
        site,
        { indexUrl: index },
        { python: host?.executable, onProgress: noProgress },
      ),
      (e: Error & { code?: string }) =>
        e.code === 'dist.wheels' &&
        /pip could not install no-such-pkg for CPython 3\.11 from http:\/\/127\.0\.0\.1/.test(e.message),
    )
    await assert.rejects(
      installWheels(
        ['visdemo'],
        '3.11',
        site,
        { indexUrl: join(wheels, 'nope') },
        { python: host?.executable, onProgress: noProgress },
      ),
      { code: 'dist.wheels', message: /the wheel directory .*nope does not exist/ },
    )
    assert.deepEqual(readdirSync(site), [])
  })

  test('a staged tree records the wheels in its manifest and vis runtime status shows them', async () => {
    assert.ok(host)
    const out = temp('vis-wheel-stage-')
    const r = await stageFromPython(host.executable, {
      out,
      archive: false,
      packages: parseWith(['visdemo']),
      indexUrl: index,
    })
    const m = readDistManifest(join(r.root, 'vis-dist.json'))
    assert.deepEqual(m.packages, ['visdemo 1.0 (wheel)', 'visdep 2.0 (wheel)'])
    assert.deepEqual(m.requested, ['visdemo'])
    // Compiled like the stdlib (unchecked-hash), so imports stay fast and the tree read-only.
    assert.ok(readdirSync(join(treePaths(r.root, '3.11').sitePackages, 'visdemo', '__pycache__')).length > 0)
    const status = await runCli(
      ['runtime', 'status', '--python', '3.11'],
      cliEnv({ VIS_PYTHON_HOME: r.root, VIS_HOME: out }),
    )
    assert.equal(status.status, 0, status.stderr)
    assert.match(status.stdout, /packages {4}visdemo 1\.0 \(wheel\), visdep 2\.0 \(wheel\)/)
    assert.equal(basename(r.root), 'python')
  })
})
