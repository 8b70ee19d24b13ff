// The engine wired to the trusted extensions and the project: extension tools and ctx in real
// sessions, the extension directories masked in the jail, the project's src layout on the
// sandbox's sys.path, reload into live sessions, and code formatted for display.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, before, test } from 'node:test'
import { createEngine, type Engine } from '../../src/engine/index.js'
import { trustProject } from '../../src/extensions/trust.js'
import { isVisError } from '../../src/util/errors.js'

const python = process.env.VIS_PYTHON_VERSION
const base = mkdtempSync(join(tmpdir(), 'vis-engine-ext-'))
const home = join(base, 'home')
const project = join(base, 'project')
process.env.VIS_HOME = home

// The person's own edit: a project extension file is trusted right after (`vis ext trust`).
function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, text)
  const ext = join(project, '.vis', 'extensions')
  if (path.startsWith(`${ext}/`)) trustProject(home, project, ext)
}

// A global extension with a tool and a ctx slice, a project one whose ctx is computed, and
// one that fails to load (a tool without a docstring).
write(
  join(home, 'extensions', 'tally.py'),
  'import vis\n\ndef bump(by=1):\n    """Adds to a counter."""\n    n = vis.state.get("n", 0) + by\n    vis.state.set("n", n)\n    return n\n\n' +
    'vis.register(vis.Extension(name="tally", tools=[bump], ctx={"unit": "beans"}))\n',
)
write(
  join(project, '.vis', 'extensions', 'proj.py'),
  'import vis, os\n\nvis.register(vis.Extension(name="proj", ctx=lambda: {"pid": os.getpid()}))\n',
)
write(
  join(project, '.vis', 'extensions', 'broken.py'),
  'import vis\n\ndef nodoc():\n    return 1\n\nvis.register(vis.Extension(name="broken", tools=[nodoc]))\n',
)
// A src-layout project: `import mypkg` works only with src/ on sys.path.
write(
  join(project, 'pyproject.toml'),
  '[project]\nname = "mypkg"\n\n[tool.setuptools.packages.find]\nwhere = ["src"]\n',
)
write(join(project, 'src', 'mypkg', '__init__.py'), 'VALUE = 42\n')

let engine: Engine
before(async () => {
  engine = await createEngine({ home, python, project, pool: { size: 0 } })
})
after(async () => {
  await engine?.close()
  rmSync(base, { recursive: true, force: true })
})

test('the engine lists what loaded and what failed, and reports failures as doctor warnings', () => {
  const list = engine.listExtensions()
  assert.deepEqual(list.extensions.map((e) => e.name).sort(), ['proj', 'tally'])
  const tally = list.extensions.find((e) => e.name === 'tally')!
  assert.equal(tally.scope, 'global')
  assert.deepEqual(tally.tools, ['tally_bump(by=1)'])
  assert.equal(list.warnings.length, 1)
  assert.equal(list.warnings[0]!.key, 'broken')
  assert.match(list.warnings[0]!.reason, /docstring/)
  const checks = engine.extensionChecks()
  assert.deepEqual(
    checks.map((c) => c.level),
    ['warn'],
  )
  assert.match(checks[0]!.message, /broken\.py/)
})

test('a session rooted at the project: extension tools, ctx slices and the src layout reach the block', async () => {
  const s = await engine.createSession({ roots: [project] })
  const r = await engine.runBlock(s.id, {
    code: [
      'import sys, mypkg',
      'print(await tally_bump(by=2), session["tally"]["unit"], mypkg.VALUE)',
      `print(sys.path.index(${JSON.stringify(join(project, 'src'))}) == 0)`,
      'print(session["proj"]["pid"] != __import__("os").getpid())',
    ].join('\n'),
  })
  assert.equal(r.block.error, null, JSON.stringify(r.block.error))
  assert.equal(r.block.stdout, '2 beans 42\nTrue\nTrue\n')
})

test("the project's extension directory is masked in the session's jail", async () => {
  const s = engine.listSessions()[0]!
  const ext = join(project, '.vis', 'extensions')
  const r = await engine.runBlock(s.id, {
    code: [
      'import os',
      `print(os.listdir(${JSON.stringify(ext)}))`,
      'try:',
      `    open(${JSON.stringify(join(ext, 'planted.py'))}, "w").write("import vis")`,
      '    print("written")',
      'except OSError as e:',
      '    print("refused", type(e).__name__)',
      'try:',
      `    os.rename(${JSON.stringify(join(project, '.vis'))}, ${JSON.stringify(join(project, 'elsewhere'))})`,
      '    print("moved")',
      'except OSError as e:',
      '    print("refused", type(e).__name__)',
    ].join('\n'),
  })
  assert.equal(r.block.error, null, JSON.stringify(r.block.error))
  assert.match(r.block.stdout, /^\[\]\nrefused \w+\nrefused \w+\n$/)
  assert.ok(!existsSync(join(ext, 'planted.py')))
  assert.ok(existsSync(join(ext, 'proj.py')))
})

test('the host file tools refuse the extension directory too (they run outside the jail)', async () => {
  const s = engine.listSessions()[0]!
  const r = await engine.runBlock(s.id, {
    code: [
      'for name, call in [',
      '    ("cat", lambda: cat(".vis/extensions/proj.py")),',
      '    ("patch", lambda: patch([{"path": ".vis/extensions/proj.py", "search": "proj", "replace": "evil"}])),',
      ']:',
      '    try:',
      '        await call()',
      '        print(name, "allowed")',
      '    except Exception as e:',
      '        print(name, "denied" if "extension directory" in str(e) else f"other: {e}")',
      'await cat("pyproject.toml")',
      'print("the rest of the root is readable")',
    ].join('\n'),
  })
  assert.equal(r.block.error, null, JSON.stringify(r.block.error))
  assert.equal(r.block.stdout, 'cat denied\npatch denied\nthe rest of the root is readable\n')
  assert.match(readFileSync(join(project, '.vis', 'extensions', 'proj.py'), 'utf8'), /name="proj"/)
})

test('reload binds a new extension tool into the live session and unbinds one that went away', async () => {
  const s = engine.listSessions()[0]!
  write(
    join(project, '.vis', 'extensions', 'greet.py'),
    'import vis\n\ndef hello(name):\n    """Greets."""\n    return "hello " + name\n\nvis.register(vis.Extension(name="greet", tools=[hello]))\n',
  )
  rmSync(join(home, 'extensions', 'tally.py'))
  const list = await engine.reloadExtensions()
  assert.deepEqual(list.extensions.map((e) => e.name).sort(), ['greet', 'proj'])
  const r = await engine.runBlock(s.id, {
    code: 'print(await greet_hello("vis"))\ntry:\n    tally_bump\n    print("still there")\nexcept NameError:\n    print("gone")',
  })
  assert.equal(r.block.error, null, JSON.stringify(r.block.error))
  assert.equal(r.block.stdout, 'hello vis\ngone\n')
})

test('display formatting: code_display is formatted, the stored code stays as written', async () => {
  const s = engine.listSessions()[0]!
  const code = 'x=[1,2,\n  3]\nprint( x )'
  await engine.runBlock(s.id, { code })
  const raw = engine.getSession(s.id)
  const last = raw.blocks.at(-1)!
  assert.equal(last.code, code)
  assert.equal(last.code_display, undefined)
  const shown = engine.getSession(s.id, { format: 'display' }).blocks.at(-1)!
  assert.equal(shown.code, code)
  assert.equal(shown.code_display, 'x = [1, 2, 3]\nprint(x)\n')
  // Code that does not parse is shown as written.
  await engine.runBlock(s.id, { code: 'def broken(:\n  pass' })
  const bad = engine.getSession(s.id, { format: 'display' }).blocks.at(-1)!
  assert.equal(bad.code_display, 'def broken(:\n  pass')
  assert.equal(readFileSync(join(project, 'src', 'mypkg', '__init__.py'), 'utf8'), 'VALUE = 42\n')
})

test('a root inside an extension directory is refused and leaves no session behind', async () => {
  const before = engine.listSessions().length
  // Refused as a root inside the project's .vis folder, before any extension check (root-guard.ts).
  await assert.rejects(engine.createSession({ roots: [join(project, '.vis', 'extensions')] }), (e) =>
    isVisError(e, 'policy.root-in-vis-folder'),
  )
  assert.equal(engine.listSessions().length, before)
})
