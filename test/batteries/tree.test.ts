// The staged set as files: every extension module finds its libraries inside the tree
// (or among the host's base libraries), the manifest lists packages and libraries, and
// the sets parse as documented.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { before, test } from 'node:test'
import { treePaths } from '../../src/distribution/layout.js'
import { parseStanza } from '../../src/distribution/packages/debian.js'
import { installSelection } from '../../src/distribution/packages/install.js'
import { parseWith } from '../../src/distribution/packages/sets.js'
import { noProgress } from '../../src/distribution/progress.js'
import { listFiles } from '../../src/distribution/slim.js'
import { cleanPythonEnv } from '../../src/distribution/tools.js'
import { batteriesTree, MINOR, manifestOf, WANTED } from './helpers.js'

let dist: string
before(async () => {
  dist = await batteriesTree()
})

test('every extension module resolves its libraries; the copied ones from lib/deps via $ORIGIN', () => {
  const p = treePaths(dist, MINOR)
  const objects = listFiles(p.sitePackages, (n) => n.endsWith('.so'))
  assert.ok(objects.length > 50, `${objects.length} extension modules`)
  const libs = manifestOf(dist).libraries ?? []
  for (const lib of ['libblas.so.3', 'libjpeg.so.62', 'libfreetype.so.6', 'libxml2.so.2', 'libpng16.so.16']) {
    assert.ok(libs.includes(lib), `${lib} in the manifest`)
  }
  const env = cleanPythonEnv()
  for (const so of objects) {
    const out = execFileSync('ldd', [so], { env, encoding: 'utf8' })
    assert.doesNotMatch(out, /not found/, `${so}\n${out}`)
    for (const lib of libs) {
      const line = out.split('\n').find((l) => l.trim().startsWith(`${lib} =>`))
      const found = line && /=> (\S+)/.exec(line)?.[1]
      if (found) assert.equal(resolve(found), join(p.lib, 'deps', lib), `${so}: ${line}`)
    }
  }
  const rp = execFileSync(
    'readelf',
    [
      '-d',
      join(
        p.sitePackages,
        'lxml',
        readdirSync(join(p.sitePackages, 'lxml')).find((n) => n.startsWith('etree.'))!,
      ),
    ],
    { encoding: 'utf8' },
  )
  assert.match(rp, /RUNPATH.*\[\$ORIGIN\/\.\.\/\.\.\/\.\.\/deps\]/)
})

test('the manifest names every requested package with a version; matplotlib defaults to Agg; no .pth', () => {
  const m = manifestOf(dist)
  for (const w of WANTED) assert.ok(m.requested?.includes(w), `${w} requested`)
  for (const label of [
    'numpy 1.24',
    'pandas 1.5',
    'matplotlib 3.6',
    'pil 9.4',
    'requests 2.28',
    'httpx 0.23',
    'bs4 4.11',
    'lxml 4.9',
    'yaml 6.0',
  ]) {
    assert.ok(
      m.packages.some((p) => p.startsWith(label)),
      `${label} in ${m.packages.join(', ')}`,
    )
  }
  const p = treePaths(dist, MINOR)
  assert.match(
    readFileSync(join(p.sitePackages, 'matplotlib', 'mpl-data', 'matplotlibrc'), 'utf8'),
    /^backend: Agg$/m,
  )
  assert.deepEqual(
    readdirSync(p.sitePackages).filter((n) => n.endsWith('.pth')),
    [],
  )
  const out = execFileSync(
    p.executable,
    ['-I', '-c', 'import numpy, pandas; print(numpy.__file__.startswith(__import__("sys").prefix))'],
    { env: cleanPythonEnv(), encoding: 'utf8' },
  )
  assert.equal(out.trim(), 'True')
})

test('--with names: sets, aliases, unknown and malformed names', () => {
  const s = parseWith(['pytest,data', 'PyYAML', 'bs4'])
  assert.equal(s.pytest, true)
  assert.deepEqual(
    s.packages.map((p) => p.name),
    ['numpy', 'pandas', 'matplotlib', 'pillow', 'bs4', 'yaml'],
  )
  assert.deepEqual(s.sets, ['data'])
  assert.deepEqual(parseWith(['leftpad']).extra, ['leftpad'])
  // pip is a single package (Debian's python3-pip), in no set: `--with all` does not add it.
  assert.deepEqual(
    parseWith(['pip']).packages.map((p) => p.debian),
    ['python3-pip'],
  )
  assert.equal(
    parseWith(['all']).packages.some((p) => p.name === 'pip'),
    false,
  )
  assert.throws(() => parseWith(['a/b']), {
    code: 'dist.packages',
    message: /--with a\/b: not a package name/,
  })
})

test('apt-cache stanzas: alternatives, versions, arch qualifiers and provides', () => {
  const info = parseStanza(
    'Package: python3-numpy\nVersion: 1:1.24.2-1\nArchitecture: amd64\nProvides: python3-numpy-abi9, python3-f2py\nDepends: python3 (<< 3.12), python3.11:any, libblas3 | libblas.so.3\nSize: 10',
  )
  assert.deepEqual(info?.depends, [['python3'], ['python3.11'], ['libblas3', 'libblas.so.3']])
  assert.deepEqual(info?.provides, ['python3-numpy-abi9', 'python3-f2py'])
  assert.equal(info?.architecture, 'amd64')
})

test("Debian's C extensions are refused for another minor, before anything is downloaded", async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'vis-bat-minor-'))
  try {
    await assert.rejects(
      installSelection(parseWith(['numpy']), treePaths(join(tmp, 'python'), '3.12'), '3.12', {
        debCache: join(tmp, 'debs'),
        onProgress: noProgress,
      }),
      {
        code: 'dist.packages',
        message:
          /python3-numpy holds C extensions built for CPython 3\.11, not 3\.12; install them as wheels with --index-url/,
      },
    )
    assert.deepEqual(readdirSync(tmp), [])
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
})
