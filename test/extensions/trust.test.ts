// A project's .vis/extensions runs on the host, so it loads only once a person trusted its exact
// content (`vis ext trust`): content nobody trusted, or changed since, is not evaluated at all
// (not even on sys.path), with a warning naming the folder and the command; trusted content
// loads; a bytecode file planted beside a trusted source never runs in its place.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { closeRegistrationWorkers } from '../../src/extensions/registration.js'
import { ExtensionRegistry } from '../../src/extensions/registry.js'
import { runExtensionTests } from '../../src/extensions/tests.js'
import { untrustedNotices } from '../../src/extensions/trust.js'
import { pythonHome } from '../../src/worker/python-home.js'
import { extension, python, tempLayout } from './helpers.js'

const { base, home, project, global, local } = tempLayout('ext-trust')
const vis = join(import.meta.dirname, '..', 'http', 'fixtures', 'vis.ts')
const open: ExtensionRegistry[] = []
after(async () => {
  await Promise.all(open.map((r) => r.close()))
  await closeRegistrationWorkers()
  rmSync(base, { recursive: true, force: true })
})

async function registry(): Promise<ExtensionRegistry> {
  const r = await ExtensionRegistry.open({ home, project, python })
  open.push(r)
  return r
}

// A project extension whose evaluation leaves a marker: whether it ran is a file, not a report.
const marker = join(base, 'evaluated')
const body = `open(${JSON.stringify(marker)}, "a").write("x")\n\ndef hi():\n    """Says hi."""\n    return "hi"\n`

function trustCli(): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', vis, 'ext', 'trust', '--project', project], {
    env: { ...process.env, VIS_HOME: home },
    encoding: 'utf8',
    timeout: 120_000,
  })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

test('a project folder nobody trusted is not evaluated; the warning names it and the command', async () => {
  writeFileSync(
    join(global, 'mine.py'),
    extension('mine', 'def ok():\n    """Fine."""\n    return 1\n', ', tools=[ok]'),
  )
  writeFileSync(join(local, 'proj.py'), extension('proj', body, ', tools=[hi]'))
  const r = await registry()
  assert.equal(existsSync(marker), false, 'the untrusted project extension was evaluated')
  assert.deepEqual(
    r.list().map((e) => e.key),
    ['mine'],
    'the home extensions still load',
  )
  assert.deepEqual(r.dirs, [global], 'the project folder is not even on sys.path')
  const w = r.warnings().find((x) => x.code === 'ext.project-untrusted')
  assert.ok(w, JSON.stringify(r.warnings()))
  assert.equal(w.path, local)
  assert.match(w.reason, /NOT loaded: .*not trusted yet/)
  assert.ok(w.reason.includes(`vis ext trust --project ${project}`), w.reason)
  // What `vis run`, `vis chat` and `vis serve` print on stderr.
  assert.deepEqual(untrustedNotices(r.warnings()), [`vis: WARNING: ${w.reason}\n`])
  // `vis ext test` runs nothing of it either (conftest.py and test files are code too).
  writeFileSync(join(local, 'test_proj.py'), `open(${JSON.stringify(marker)}, "a").write("t")\n`)
  const reports = await runExtensionTests({ home, project, python })
  assert.deepEqual(
    reports.map((x) => x.key),
    ['mine'],
  )
  assert.equal(existsSync(marker), false)
  rmSync(join(local, 'test_proj.py'))
})

test('`vis ext trust` lists what it trusts; that content then loads', async () => {
  const t = trustCli()
  assert.equal(t.status, 0, t.stderr)
  assert.match(t.stdout, new RegExp(`trusted ${local} as it is now \\(sha256 [0-9a-f]{64}\\)`))
  assert.match(t.stdout, /^ {2}proj\.py$/m)
  const r = await registry()
  assert.ok(r.get('proj'), JSON.stringify(r.warnings()))
  assert.equal(existsSync(marker), true, 'the trusted extension was evaluated')
  assert.equal(r.warnings().length, 0, JSON.stringify(r.warnings()))
  assert.equal(await r.toolsOf('proj')[0]!.run([], { sessionId: 's' } as never), 'hi')
})

test('any change after trusting (a new helper, an edit) stops the whole folder until trusted again', async () => {
  // A helper the trusted file never imports still lands on sys.path beside it, where it could
  // shadow a module a trusted extension imports: every file counts.
  writeFileSync(join(local, 'json.py'), 'raise SystemExit("planted")\n')
  rmSync(marker, { force: true })
  const r = await registry()
  assert.equal(r.get('proj'), undefined)
  assert.equal(existsSync(marker), false)
  const w = r.warnings().find((x) => x.code === 'ext.project-untrusted')
  assert.match(w?.reason ?? '', /changed since you trusted it/)
  rmSync(join(local, 'json.py'))
  // Back to the content that was trusted: it loads again without asking.
  const again = await registry()
  assert.ok(again.get('proj'), JSON.stringify(again.warnings()))
})

test('a .pyc planted beside a trusted helper never runs in its place', async () => {
  const pkg = join(local, 'withhelper')
  mkdirSync(pkg, { recursive: true })
  writeFileSync(join(pkg, 'helper.py'), 'VALUE = "trusted"\n')
  writeFileSync(
    join(pkg, 'extension.py'),
    extension(
      'withhelper',
      'from withhelper.helper import VALUE\n\ndef value():\n    """The helper\'s value."""\n    return VALUE\n',
      ', tools=[value]',
    ),
  )
  assert.equal(trustCli().status, 0)
  // Bytecode the hash checks never see: an unchecked-hash .pyc is used without looking at the source.
  const py = await pythonHome(python)
  const evil = join(base, 'evil_helper.py')
  writeFileSync(evil, 'VALUE = "planted"\n')
  const tag = `cpython-${py.minor.replace('.', '')}`
  const c = spawnSync(
    py.executable,
    [
      '-c',
      'import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)',
      evil,
      join(pkg, '__pycache__', `helper.${tag}.pyc`),
    ],
    { encoding: 'utf8' },
  )
  assert.equal(c.status, 0, c.stderr)
  const r = await registry()
  assert.ok(r.get('withhelper'), JSON.stringify(r.warnings()))
  assert.equal(await r.toolsOf('withhelper')[0]!.run([], { sessionId: 'p' } as never), 'trusted')
})

test('`vis ext test` of a trusted folder imports no conftest.py from the project above it', async () => {
  // The project root is the sessions' to write; only the trusted folder's own files may run.
  const planted = join(base, 'conftest-ran')
  writeFileSync(join(project, 'conftest.py'), `open(${JSON.stringify(planted)}, "w").write("x")\n`)
  writeFileSync(join(local, 'test_proj.py'), 'def test_ok():\n    assert True\n')
  assert.equal(trustCli().status, 0)
  const reports = await runExtensionTests({ home, project, python, name: 'proj' })
  assert.equal(reports[0]?.counts.passed, 1, JSON.stringify(reports))
  assert.equal(existsSync(planted), false, "the project's conftest.py ran on the host")
})
