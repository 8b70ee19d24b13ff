// The project layout → the sandbox's sys.path: what the host derives from the roots, and how
// the guest runtime's `sys_path` config key places it (ordered, once, replaced on re-install).
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, test } from 'node:test'
import { sandboxSysPath } from '../../src/engine/sys-path.js'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'

const python = process.env.VIS_PYTHON_VERSION
const base = mkdtempSync(join(tmpdir(), 'vis-syspath-'))
process.env.VIS_HOME = join(base, 'home')

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, text)
}

let rt: Runtime | undefined
after(async () => {
  await rt?.close()
  rmSync(base, { recursive: true, force: true })
})

test('import roots come from the project and from roots that are projects, configured paths first, inside the roots only', async () => {
  const ws = join(base, 'ws')
  const proj = join(ws, 'proj')
  write(
    join(proj, 'pyproject.toml'),
    '[tool.setuptools.packages.find]\nwhere = ["src", "lib", "src"]\n[tool.pytest.ini_options]\npythonpath = ["../../outside", "lib"]\n',
  )
  for (const d of ['src', 'lib', 'tools']) mkdirSync(join(proj, d), { recursive: true })
  mkdirSync(join(base, 'outside'))
  // A second root that declares its own layout; a third with none gets nothing.
  const other = join(base, 'other')
  write(join(other, 'setup.cfg'), '[options]\npackage_dir =\n    = code\n')
  mkdirSync(join(other, 'code'))
  const plain = join(base, 'plain')
  mkdirSync(join(plain, 'src'), { recursive: true })
  const paths = await sandboxSysPath({
    roots: [ws, other, plain],
    project: proj,
    sourcePaths: ['tools'],
    python,
  })
  // The declared roots first, then each root itself (as python3 puts its script's directory).
  assert.deepEqual(paths, [
    join(proj, 'tools'),
    join(proj, 'src'),
    join(proj, 'lib'),
    join(other, 'code'),
    ws,
    other,
    plain,
  ])
  // No roots, no sys.path: the sandbox could not read any of it.
  assert.deepEqual(await sandboxSysPath({ roots: [], project: proj, python }), [])
  // A project outside every root contributes nothing; the root itself is still there.
  assert.deepEqual(await sandboxSysPath({ roots: [plain], project: proj, python }), [plain])
})

test("the parse is cached per project and its metadata files' stamps: an edit is read again", async () => {
  const proj = join(base, 'cached')
  write(join(proj, 'pyproject.toml'), '[tool.setuptools.packages.find]\nwhere = ["src"]\n')
  mkdirSync(join(proj, 'src'), { recursive: true })
  mkdirSync(join(proj, 'lib'), { recursive: true })
  const cache = join(base, 'home', 'cache', 'project-layout')
  const { existsSync, readdirSync } = await import('node:fs')
  const listed = () => (existsSync(cache) ? readdirSync(cache).filter((f) => f.endsWith('.json')) : [])
  // Earlier tests left their own entries (which may also name "src"): this project's entry is
  // the one its first parse adds.
  const before = new Set(listed())
  const first = await sandboxSysPath({ roots: [proj], project: proj, python })
  assert.deepEqual(first, [join(proj, 'src'), proj])
  const added = listed().filter((f) => !before.has(f))
  assert.equal(added.length, 1, `one cache entry for the project, got ${JSON.stringify(added)}`)
  const mine = added[0]!
  // The same files again are answered from the cache, not parsed: a planted entry shows it.
  write(
    join(cache, mine),
    JSON.stringify({
      entries: [{ file: 'pyproject.toml', key: 'k', kind: 'root', value: 'lib' }],
      warnings: [],
    }),
  )
  assert.deepEqual(await sandboxSysPath({ roots: [proj], project: proj, python }), [join(proj, 'lib'), proj])
  // A changed file (another size) is parsed again.
  write(join(proj, 'pyproject.toml'), '[tool.setuptools.packages.find]\nwhere = ["lib", "src"]\n')
  assert.deepEqual(await sandboxSysPath({ roots: [proj], project: proj, python }), [
    join(proj, 'lib'),
    join(proj, 'src'),
    proj,
  ])
})

test('the guest puts sys_path first, in order and once, and a second install replaces the first', async () => {
  const a = join(base, 'pa')
  const b = join(base, 'pb')
  write(join(a, 'moda.py'), 'WHERE = "a"\n')
  write(join(b, 'modb.py'), 'WHERE = "b"\n')
  rt = await createRuntime({ python, pool: { size: 0 }, defaultTools: false })
  const s = await rt.createSession({ roots: [a, b] })
  await s.callGuest('install_runtime', { sys_path: [b, a, b] })
  const first = await s.runBlock(
    `import sys, moda, modb\nprint(sys.path[:2] == [${JSON.stringify(b)}, ${JSON.stringify(a)}], sys.path.count(${JSON.stringify(b)}), moda.WHERE + modb.WHERE)`,
  )
  assert.equal(first.error, undefined, JSON.stringify(first.error))
  assert.equal(first.stdout, 'True 1 ab\n')
  await s.callGuest('install_runtime', { sys_path: [a] })
  const second = await s.runBlock(
    `print(sys.path[0] == ${JSON.stringify(a)}, ${JSON.stringify(b)} in sys.path)`,
  )
  assert.equal(second.stdout, 'True False\n')
})
