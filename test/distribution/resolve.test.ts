import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { after, before, beforeEach, describe, test } from 'node:test'
import { unpackArchive } from '../../src/distribution/archive.js'
import { findLocalPython } from '../../src/distribution/discover.js'
import { cacheRoot } from '../../src/distribution/layout.js'
import { explainResolution, resolveDistribution, selectMinor } from '../../src/distribution/resolve.js'
import { cleanPythonEnv } from '../../src/distribution/tools.js'
import { closedPort, type Fixtures, fixtures, MINOR, PLATFORM, tempDir } from './helpers.js'

let f: Fixtures
let small: string // an unpacked copy of the small archive: a tree without pytest
let checkout: string // a CPython build tree laid out like `./configure --enable-shared && make`
let emptyStaged: string
let offline: string
const scratch: string[] = []

before(async () => {
  f = await fixtures()
  const work = tempDir()
  scratch.push(work)
  await unpackArchive(join(f.release, f.small.file), work)
  small = join(work, 'python')
  checkout = join(work, 'cpython')
  mkdirSync(join(checkout, 'Modules'), { recursive: true })
  cpSync(join(small, 'lib', `python${MINOR}`), join(checkout, 'Lib'), { recursive: true })
  const builddir = `build/lib.linux-x86_64-${MINOR}`
  mkdirSync(join(checkout, 'build'))
  renameSync(join(checkout, 'Lib', 'lib-dynload'), join(checkout, builddir))
  writeFileSync(join(checkout, 'pybuilddir.txt'), builddir)
  writeFileSync(join(checkout, 'Modules', 'Setup.local'), '')
  cpSync(join(small, 'include', `python${MINOR}`), join(checkout, 'Include'), { recursive: true })
  cpSync(join(small, 'lib', `libpython${MINOR}.so.1.0`), join(checkout, `libpython${MINOR}.so.1.0`))
  cpSync(join(small, 'bin', `python${MINOR}`), join(checkout, 'python'))
  emptyStaged = tempDir()
  scratch.push(emptyStaged)
  offline = `http://127.0.0.1:${await closedPort()}`
})
after(() => {
  for (const d of scratch) rmSync(d, { recursive: true, force: true })
})
beforeEach(() => {
  process.env.VIS_HOME = tempDir('vis-dist-home-')
  scratch.push(process.env.VIS_HOME)
})

function putInCache(): string {
  const root = cacheRoot(MINOR)
  mkdirSync(dirname(root), { recursive: true })
  cpSync(small, root, { recursive: true, verbatimSymlinks: true })
  return root
}

const noLocal = () => ({ VIS_PYTHON_STAGED_DIR: emptyStaged, VIS_PYTHON_DIST_URL: offline })

describe('resolution sources, in order', () => {
  test('VIS_PYTHON_HOME answers first, as the python/ dir or the dir holding it', async () => {
    putInCache()
    for (const home of [f.staged.root, dirname(f.staged.root)]) {
      const d = await resolveDistribution({
        env: { VIS_PYTHON_HOME: home, VIS_PYTHON_STAGED_DIR: f.out, VIS_PYTHON_CHECKOUT: checkout },
      })
      assert.equal(d.source, 'env')
      assert.equal(d.root, f.staged.root)
      assert.equal(d.version, f.staged.version)
      assert.equal(d.kind, 'install')
      assert.equal(d.executable, join(f.staged.root, 'bin', `python${MINOR}`))
      assert.equal(d.include, join(f.staged.root, 'include', `python${MINOR}`))
    }
  })

  test('VIS_PYTHON_HOME may be a plain pyenv prefix: the version comes from its headers', async () => {
    const other = findLocalPython('3.12') ?? findLocalPython('3.13')
    assert.ok(other, 'this machine should have a shared-library CPython 3.12 or 3.13')
    const d = await resolveDistribution({ env: { VIS_PYTHON_HOME: other.prefix, ...noLocal() } })
    assert.equal(d.source, 'env')
    assert.equal(d.version, other.version)
    assert.equal(d.minor, other.minor)
    assert.equal(d.root, other.prefix)
    assert.equal(d.libpython, join(other.prefix, 'lib', `libpython${other.minor}.so.1.0`))
  })

  test('a broken VIS_PYTHON_HOME is an error, not a silent fall-through', async () => {
    const broken = tempDir()
    scratch.push(broken)
    mkdirSync(join(broken, 'lib', `python${MINOR}`), { recursive: true })
    writeFileSync(join(broken, 'lib', `python${MINOR}`, 'os.py'), '')
    await assert.rejects(
      resolveDistribution({ env: { VIS_PYTHON_HOME: broken, VIS_PYTHON_STAGED_DIR: f.out } }),
      {
        code: 'dist.invalid',
        message: /encodings\/__init__\.py is missing/,
      },
    )
  })

  test('VIS_PYTHON_HOME holding another minor than the one asked for yields to the next source', async () => {
    const other = findLocalPython('3.12') ?? findLocalPython('3.13')
    assert.ok(other)
    const env = { VIS_PYTHON_HOME: other.prefix, VIS_PYTHON_STAGED_DIR: f.out }
    const d = await resolveDistribution({ minor: MINOR, env })
    assert.equal(d.source, 'staged')
    const ex = await explainResolution({ minor: MINOR, env })
    assert.equal(
      ex.sources[0]!.reason,
      `VIS_PYTHON_HOME holds Python ${other.version}, but 3.11 was asked for`,
    )
  })

  test('the staged tree beside the package answers before the checkout and the cache', async () => {
    putInCache()
    const d = await resolveDistribution({
      env: { VIS_PYTHON_STAGED_DIR: f.out, VIS_PYTHON_CHECKOUT: checkout },
    })
    assert.equal(d.source, 'staged')
    assert.equal(d.root, f.staged.root)
    assert.ok(d.manifest.packages.some((p) => p.startsWith('pytest ')))
  })

  test('a built checkout answers before the cache, and it really is a build tree python accepts', async () => {
    putInCache()
    const d = await resolveDistribution({ env: { ...noLocal(), VIS_PYTHON_CHECKOUT: checkout } })
    assert.equal(d.source, 'checkout')
    assert.equal(d.kind, 'build-tree')
    assert.equal(d.version, f.staged.version)
    assert.equal(d.libpython, join(checkout, `libpython${MINOR}.so.1.0`))
    assert.deepEqual(d.includeDirs, [join(checkout, 'Include'), checkout])
    // CPython's getpath recognises the layout: Lib/ and pybuilddir.txt's dir.
    const out = execFileSync(
      d.executable,
      ['-I', '-B', '-c', 'import sys, json; print(json.dumps(sys.path))'],
      {
        env: { ...cleanPythonEnv(), LD_LIBRARY_PATH: checkout },
        encoding: 'utf8',
      },
    )
    const path = JSON.parse(out) as string[]
    assert.ok(path.includes(d.stdlib), out)
    assert.ok(path.includes(d.libDynload), out)
  })

  test('a checkout that was never built is refused with the reason', async () => {
    const raw = tempDir()
    scratch.push(raw)
    cpSync(join(checkout, 'Include'), join(raw, 'Include'), { recursive: true })
    cpSync(join(checkout, 'Lib'), join(raw, 'Lib'), { recursive: true })
    await assert.rejects(resolveDistribution({ env: { ...noLocal(), VIS_PYTHON_CHECKOUT: raw } }), {
      code: 'dist.invalid',
      message: /libpython3\.11\.so\.1\.0 is missing \(configure with --enable-shared/,
    })
  })

  test('the per-user cache answers without the network', async () => {
    const root = putInCache()
    const d = await resolveDistribution({ env: noLocal() })
    assert.equal(d.source, 'cache')
    assert.equal(d.root, root)
    assert.ok(root.startsWith(process.env.VIS_HOME!))
    assert.equal(root, join(process.env.VIS_HOME!, 'python', 'runtime', MINOR, PLATFORM, 'python'))
  })

  test('an invalid staged tree is skipped with its reason', async () => {
    const staged = tempDir()
    scratch.push(staged)
    const root = join(staged, MINOR, PLATFORM, 'python')
    cpSync(small, root, { recursive: true, verbatimSymlinks: true })
    rmSync(join(root, 'lib', `libpython${MINOR}.so.1.0`))
    putInCache()
    const d = await resolveDistribution({
      env: { VIS_PYTHON_STAGED_DIR: staged, VIS_PYTHON_DIST_URL: offline },
    })
    assert.equal(d.source, 'cache')
    const ex = await explainResolution({ env: { VIS_PYTHON_STAGED_DIR: staged } })
    assert.equal(ex.resolved?.source, 'cache')
    assert.match(ex.sources.find((s) => s.source === 'staged')!.reason, /libpython3\.11\.so\.1\.0 is missing/)
  })
})

describe('minor selection and explanations', () => {
  test('explicit option > VIS_PYTHON_VERSION > lowest staged minor > 3.11', () => {
    const staged = tempDir()
    scratch.push(staged)
    mkdirSync(join(staged, '3.13'))
    mkdirSync(join(staged, '3.12'))
    assert.equal(selectMinor({ minor: '3.13', env: { VIS_PYTHON_VERSION: '3.12' } }), '3.13')
    assert.equal(selectMinor({ env: { VIS_PYTHON_VERSION: '3.12', VIS_PYTHON_STAGED_DIR: staged } }), '3.12')
    assert.equal(selectMinor({ env: { VIS_PYTHON_STAGED_DIR: staged } }), '3.12')
    assert.equal(selectMinor({ env: { VIS_PYTHON_STAGED_DIR: emptyStaged } }), '3.11')
    assert.throws(() => selectMinor({ minor: '2.7' }), { code: 'dist.version' })
    assert.throws(() => selectMinor({ env: { VIS_PYTHON_VERSION: 'three' } }), { code: 'dist.env' })
  })

  test('explainResolution says why each source did not answer, and downloads nothing', async () => {
    const ex = await explainResolution({ env: noLocal() })
    assert.equal(ex.resolved, undefined)
    assert.deepEqual(
      ex.sources.map((s) => [s.source, s.answered]),
      [
        ['env', false],
        ['staged', false],
        ['checkout', false],
        ['cache', false],
        ['download', false],
      ],
    )
    const why = Object.fromEntries(ex.sources.map((s) => [s.source, s.reason]))
    assert.equal(why.env, 'VIS_PYTHON_HOME is not set')
    assert.equal(why.staged, `nothing staged at ${join(emptyStaged, MINOR, PLATFORM, 'python')}`)
    assert.equal(why.checkout, 'VIS_PYTHON_CHECKOUT is not set')
    assert.match(why.cache!, /^nothing cached at /)
    assert.ok(why.download!.includes(`${offline}/cpython-3.11-${PLATFORM}.json`))
    assert.equal(existsSync(cacheRoot(MINOR)), false)
  })
})
