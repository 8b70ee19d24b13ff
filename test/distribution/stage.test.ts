import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { sha256File } from '../../src/distribution/archive.js'
import { findLocalPython } from '../../src/distribution/discover.js'
import { treePaths } from '../../src/distribution/layout.js'
import { readDistManifest } from '../../src/distribution/manifest.js'
import { stageFromPython } from '../../src/distribution/stage.js'
import { stageFromArchive } from '../../src/distribution/stage-archive.js'
import { cleanPythonEnv } from '../../src/distribution/tools.js'
import { type Fixtures, fixtures, MINOR, PLATFORM, tempDir } from './helpers.js'

let f: Fixtures
const scratch: string[] = []
before(async () => {
  process.env.VIS_HOME = tempDir('vis-dist-home-')
  scratch.push(process.env.VIS_HOME)
  f = await fixtures()
})
after(() => {
  for (const d of scratch) rmSync(d, { recursive: true, force: true })
})

function walk(dir: string): string[] {
  const out: string[] = []
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    out.push(p)
    if (e.isDirectory()) out.push(...walk(p))
  }
  return out
}

describe('staging from a local shared-library CPython', () => {
  test('the tree is slim: no tests, GUI, installer, test modules or static lib', () => {
    const p = treePaths(f.staged.root, MINOR)
    for (const gone of ['test', 'idlelib', 'tkinter', 'turtledemo', 'ensurepip', 'lib2to3/tests']) {
      assert.equal(existsSync(join(p.stdlib, gone)), false, `${gone} should not be staged`)
    }
    const all = walk(f.staged.root)
    assert.deepEqual(
      all.filter((x) =>
        /\/(_test|_ctypes_test|_xxsubinterpreters|_testcapi|_testinternalcapi)[^/]*\.so$/.test(x),
      ),
      [],
    )
    assert.deepEqual(
      readdirSync(p.stdlib).filter((n) => n.startsWith('config-')),
      [],
    )
    assert.equal(
      all.some((x) => x.endsWith('.a')),
      false,
    )
    // What is kept works: the real modules are there.
    assert.ok(existsSync(join(p.stdlib, 'json', '__init__.py')))
    assert.ok(readdirSync(p.libDynload).some((n) => n.startsWith('_ssl.')))
  })

  test('site-packages holds only what we put there: pytest and no .pth files', () => {
    const p = treePaths(f.staged.root, MINOR)
    const names = readdirSync(p.sitePackages)
    assert.deepEqual(
      names.filter((n) => n.endsWith('.pth')),
      [],
    )
    for (const want of ['pytest', '_pytest', 'pluggy', 'iniconfig', 'packaging', 'attr']) {
      assert.ok(names.includes(want), `${want} missing from ${names.join(' ')}`)
    }
    // Nothing from pyenv's own site-packages leaked in.
    assert.equal(names.includes('numpy'), false)
    assert.equal(names.includes('_sandboxing_egress_ca.pth'), false)
  })

  test('every stdlib module has an unchecked-hash .pyc', () => {
    const p = treePaths(f.staged.root, MINOR)
    const pyc = join(p.stdlib, '__pycache__', `os.cpython-${MINOR.replace('.', '')}.pyc`)
    const header = readFileSync(pyc).subarray(0, 8)
    // PEP 552 flags: bit 0 hash-based, bit 1 check_source; unchecked = 0b01.
    assert.equal(header.readUInt32LE(4), 1)
    const sources = walk(p.stdlib).filter((x) => x.endsWith('.py') && !x.includes('/site-packages/'))
    const compiled = walk(p.stdlib).filter((x) => x.endsWith('.pyc') && !x.includes('/site-packages/'))
    assert.ok(sources.length > 500)
    assert.ok(compiled.length >= sources.length * 0.99, `${compiled.length} pyc for ${sources.length} py`)
  })

  test('binaries are stripped of debug info and find libpython through $ORIGIN', () => {
    const p = treePaths(f.staged.root, MINOR)
    const dyn = execFileSync('readelf', ['-d', p.executable], { encoding: 'utf8' })
    assert.match(dyn, /RUNPATH.*\[\$ORIGIN\/\.\.\/lib\]/)
    const sections = execFileSync('readelf', ['-S', p.libpython], { encoding: 'utf8' })
    assert.equal(sections.includes('.debug_info'), false)
  })

  test('the manifest and the archive agree', async () => {
    const m = readDistManifest(join(f.staged.root, 'vis-dist.json'))
    assert.equal(m.version, f.staged.version)
    assert.equal(m.minor, MINOR)
    assert.equal(m.platform, PLATFORM)
    assert.match(m.source, /^local:/)
    assert.ok(m.packages.some((x) => x.startsWith('pytest ')))
    assert.ok(f.staged.archive && existsSync(f.staged.archive))
    const actual = await sha256File(f.staged.archive!)
    assert.equal(m.sha256, actual)
    const side = JSON.parse(
      readFileSync(join(f.out, 'archives', `cpython-${f.staged.version}-${PLATFORM}.json`), 'utf8'),
    )
    assert.equal(side.sha256, actual)
    assert.equal(side.size, statSync(f.staged.archive!).size)
    const alias = JSON.parse(
      readFileSync(join(f.out, 'archives', `cpython-${MINOR}-${PLATFORM}.json`), 'utf8'),
    )
    assert.equal(alias.file, `cpython-${f.staged.version}-${PLATFORM}.tar.gz`)
    // No temp dirs left beside the tree.
    assert.deepEqual(readdirSync(join(f.out, MINOR, PLATFORM)), ['python'])
  })

  test('the tree works after being moved: ssl, sqlite3, ctypes, and pytest run', () => {
    const moved = join(tempDir(), 'elsewhere', 'python')
    scratch.push(join(moved, '..', '..'))
    cpSync(f.staged.root, moved, { recursive: true, verbatimSymlinks: true })
    const exe = treePaths(moved, MINOR).executable
    const out = execFileSync(
      exe,
      [
        '-I',
        '-c',
        'import sys, json, ssl, sqlite3, ctypes; print(json.dumps([sys.prefix, sys.version.split()[0], ssl.OPENSSL_VERSION[:7], sqlite3.sqlite_version]))',
      ],
      { env: cleanPythonEnv(), encoding: 'utf8' },
    )
    const [prefix, version, openssl] = JSON.parse(out) as string[]
    assert.equal(prefix, moved)
    assert.equal(version, f.staged.version)
    assert.equal(openssl, 'OpenSSL')

    const tests = tempDir()
    scratch.push(tests)
    writeFileSync(join(tests, 'test_it.py'), 'def test_ok():\n    assert 1 + 1 == 2\n')
    const r = spawnSync(exe, ['-I', '-m', 'pytest', '-q', '-p', 'no:cacheprovider', tests], {
      env: cleanPythonEnv(),
      encoding: 'utf8',
    })
    assert.equal(r.status, 0, r.stdout + r.stderr)
    assert.match(r.stdout, /1 passed/)
  })

  test('staging again without --force leaves the tree alone', async () => {
    const before = statSync(join(f.staged.root, 'vis-dist.json')).mtimeMs
    const local = findLocalPython(MINOR)
    assert.ok(local)
    const again = await stageFromPython(local.executable, { out: f.out, withPytest: true })
    assert.equal(again.skipped, true)
    assert.equal(statSync(join(f.staged.root, 'vis-dist.json')).mtimeMs, before)
  })

  test("Debian's CPython (libpython in the multiarch dir, static binary) stages too", async (t) => {
    if (!existsSync('/usr/bin/python3.11')) {
      assert.fail('this machine has no /usr/bin/python3.11 to stage from')
    }
    const out = tempDir()
    scratch.push(out)
    const r = await stageFromPython('/usr/bin/python3.11', { out, archive: false })
    t.diagnostic(`Debian ${r.version} staged`)
    const p = treePaths(r.root, MINOR)
    assert.ok(existsSync(p.libpython))
    assert.ok(existsSync(join(p.include, 'Python.h')))
    assert.equal(existsSync(join(p.stdlib, 'sitecustomize.py')), false)
    const out2 = execFileSync(p.executable, ['-I', '-c', 'import sys, ssl; print(sys.prefix)'], {
      env: cleanPythonEnv(),
      encoding: 'utf8',
    })
    assert.equal(out2.trim(), r.root)
  })
})

describe('staging from an archive', () => {
  test('an install_only archive is unpacked, checked and placed', async () => {
    const out = tempDir()
    scratch.push(out)
    const archive = join(f.release, f.small.file)
    const r = await stageFromArchive(archive, { out })
    assert.equal(r.version, f.staged.version)
    assert.equal(r.root, join(out, MINOR, PLATFORM, 'python'))
    const m = readDistManifest(join(r.root, 'vis-dist.json'))
    assert.equal(m.sha256, f.small.sha256)
    assert.equal(m.source, `archive:${archive}`)
    assert.deepEqual(
      readdirSync(out)
        .filter((n) => n.startsWith('.'))
        .sort(),
      [],
    )
    const v = execFileSync(treePaths(r.root, MINOR).executable, ['-I', '-B', '-c', 'import json; print(1)'], {
      env: cleanPythonEnv(),
      encoding: 'utf8',
    })
    assert.equal(v.trim(), '1')
    await assert.rejects(stageFromArchive(archive, { out }), { code: 'dist.stage', message: /--force/ })
    const forced = await stageFromArchive(archive, { out, force: true })
    assert.equal(forced.root, r.root)
  })

  test('a corrupt archive is refused and leaves nothing behind', async () => {
    const out = tempDir()
    scratch.push(out)
    const bad = join(out, 'bad.tar.gz')
    writeFileSync(bad, readFileSync(join(f.release, f.small.file)).subarray(0, 10_000))
    await assert.rejects(stageFromArchive(bad, { out }), { code: 'dist.archive' })
    assert.deepEqual(readdirSync(out), ['bad.tar.gz'])
  })
})
