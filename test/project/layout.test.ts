import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, test } from 'node:test'
import { readDeclaredLayout } from '../../src/project/declared.js'
import { discoverProjectLayout } from '../../src/project/layout.js'

const base = mkdtempSync(join(tmpdir(), 'vis-layout-'))
process.env.VIS_HOME = join(base, 'home')
after(() => rmSync(base, { recursive: true, force: true }))

let n = 0
// A project directory with the given files (and every directory named in dirs).
function project(files: Record<string, string>, dirs: string[] = []): string {
  const dir = join(base, `p${n++}`)
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true })
    writeFileSync(join(dir, name), text)
  }
  for (const d of dirs) mkdirSync(join(dir, d), { recursive: true })
  return dir
}

test('setuptools packages.find.where and package-dir', async () => {
  const dir = project(
    {
      'pyproject.toml': `[tool.setuptools.packages.find]\nwhere = ["src", "more"]\n[tool.setuptools.package-dir]\n"" = "lib"\n"a.b" = "vendor/a/b"\n"odd" = "elsewhere/notodd"\n`,
    },
    ['src', 'more', 'lib', 'vendor/a/b', 'elsewhere/notodd'],
  )
  const l = await discoverProjectLayout(dir)
  assert.deepEqual(l.importRoots, [
    join(dir, 'src'),
    join(dir, 'more'),
    join(dir, 'lib'),
    join(dir, 'vendor'),
  ])
  assert.deepEqual(l.testPaths, [])
  assert.deepEqual(l.warnings, [])
})

test('poetry packages[].from, hatch packages and pdm package-dir', async () => {
  const poetry = project(
    {
      'pyproject.toml': `[tool.poetry]\nname = "x"\npackages = [{ include = "x", from = "src" }, { include = "y" }]\n`,
    },
    ['src'],
  )
  assert.deepEqual((await discoverProjectLayout(poetry)).importRoots, [join(poetry, 'src')])

  const hatch = project(
    { 'pyproject.toml': `[tool.hatch.build.targets.wheel]\npackages = ["src/foo", "pkgs/bar"]\n` },
    ['src/foo', 'pkgs/bar'],
  )
  assert.deepEqual((await discoverProjectLayout(hatch)).importRoots, [
    join(hatch, 'src'),
    join(hatch, 'pkgs'),
  ])

  const pdm = project({ 'pyproject.toml': `[tool.pdm.build]\npackage-dir = "source"\n` }, ['source'])
  assert.deepEqual((await discoverProjectLayout(pdm)).importRoots, [join(pdm, 'source')])
})

test('pytest pythonpath and testpaths from pyproject.toml', async () => {
  const dir = project(
    {
      'pyproject.toml': `[tool.pytest.ini_options]\npythonpath = ["src", "."]\ntestpaths = ["tests", "it"]\n`,
    },
    ['src', 'tests', 'it'],
  )
  const l = await discoverProjectLayout(dir)
  assert.deepEqual(l.importRoots, [join(dir, 'src'), dir])
  assert.deepEqual(l.testPaths, [join(dir, 'tests'), join(dir, 'it')])
})

test('setup.cfg package_dir, pytest.ini and tox.ini [pytest]', async () => {
  const cfg = project(
    {
      'setup.cfg': `[options]\npackage_dir =\n    =src\n    pkg = lib/pkg\n[tool:pytest]\ntestpaths = checks\n`,
    },
    ['src', 'lib/pkg', 'checks'],
  )
  const lc = await discoverProjectLayout(cfg)
  assert.deepEqual(lc.importRoots, [join(cfg, 'src'), join(cfg, 'lib')])
  assert.deepEqual(lc.testPaths, [join(cfg, 'checks')])

  const ini = project({ 'pytest.ini': `[pytest]\npythonpath = src\ntestpaths = tests\n` }, ['src', 'tests'])
  const li = await discoverProjectLayout(ini)
  assert.deepEqual(li.importRoots, [join(ini, 'src')])
  assert.deepEqual(li.testPaths, [join(ini, 'tests')])

  const tox = project({ 'tox.ini': `[tox]\nenvlist = py311\n[pytest]\ntestpaths = t1 t2\n` }, ['t1', 't2'])
  assert.deepEqual((await discoverProjectLayout(tox)).testPaths, [join(tox, 't1'), join(tox, 't2')])
})

test('pytest reads only the first config file it finds, as pytest does', async () => {
  const dir = project(
    {
      'pytest.ini': `[pytest]\ntestpaths = from_ini\n`,
      'pyproject.toml': `[tool.pytest.ini_options]\ntestpaths = ["from_toml"]\n`,
    },
    ['from_ini', 'from_toml'],
  )
  assert.deepEqual((await discoverProjectLayout(dir)).testPaths, [join(dir, 'from_ini')])
})

test('missing directories are dropped, duplicates kept once, configured source paths first', async () => {
  const dir = project(
    {
      'pyproject.toml': `[tool.setuptools.packages.find]\nwhere = ["src", "./src/", "gone"]\n[tool.pytest.ini_options]\npythonpath = ["src", "mine"]\ntestpaths = ["nope"]\n`,
    },
    ['src', 'mine', 'configured'],
  )
  const l = await discoverProjectLayout(dir, { sourcePaths: ['configured', 'absent', 'mine'] })
  assert.deepEqual(l.importRoots, [join(dir, 'configured'), join(dir, 'mine'), join(dir, 'src')])
  assert.deepEqual(l.testPaths, [])
})

test('a project without metadata gets nothing inferred, even with a src/ and tests/', async () => {
  const dir = project({ 'src/pkg/__init__.py': '', 'tests/test_x.py': '' })
  assert.deepEqual(await discoverProjectLayout(dir), { importRoots: [], testPaths: [], warnings: [] })
})

test('malformed TOML gives a warning and nothing from that file', async () => {
  const dir = project(
    {
      'pyproject.toml': `[tool.setuptools.packages.find\nwhere = ["src"]\n`,
      'pytest.ini': `[pytest]\ntestpaths = tests\n`,
    },
    ['src', 'tests'],
  )
  const l = await discoverProjectLayout(dir)
  assert.deepEqual(l.importRoots, [])
  assert.deepEqual(l.testPaths, [join(dir, 'tests')])
  assert.equal(l.warnings.length, 1)
  assert.equal(l.warnings[0]!.file, 'pyproject.toml')
  assert.match(l.warnings[0]!.message, /cannot parse/)
})

test('malformed ini files and wrongly typed values warn without crashing', async () => {
  const dir = project(
    {
      'setup.cfg': `this is not = an ini file\n[options\n`,
      'pyproject.toml': `[tool.setuptools.packages.find]\nwhere = 5\n[tool.pdm.build]\npackage-dir = ["src"]\n`,
    },
    ['src'],
  )
  const d = await readDeclaredLayout(dir)
  assert.deepEqual(d.entries, [])
  assert.deepEqual(d.warnings.map((w) => w.file).sort(), ['pyproject.toml', 'pyproject.toml', 'setup.cfg'])
})
