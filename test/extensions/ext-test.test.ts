// `vis ext test`: real pytest in a trusted worker, outcomes from per-test records.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join, sep } from 'node:path'
import { after, test } from 'node:test'
import { closeRegistrationWorkers } from '../../src/extensions/registration.js'
import { runExtensionTests, testFilesOf } from '../../src/extensions/tests.js'
import { trustedCopiesDir } from '../../src/extensions/trust.js'
import { packageRoot } from '../../src/util/home.js'
import { extension, python, tempLayout, write } from './helpers.js'

const { base, home, project, global, local } = tempLayout('ext-pytest')
after(async () => {
  await closeRegistrationWorkers()
  rmSync(base, { recursive: true, force: true })
})

write(
  join(global, 'calc.py'),
  extension(
    'calc',
    'import calchelp\n\ndef add(a, b):\n    """Adds."""\n    return calchelp.plus(a, b)\n',
    ', tools=[add]',
  ),
)
write(join(global, 'calchelp', '__init__.py'), 'def plus(a, b):\n    return a + b\n')
write(
  join(global, 'test_calc.py'),
  'import calc\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n\ndef test_neg():\n    assert calc.add(-1, 1) == 0\n',
)
write(
  join(global, 'calc_test.py'),
  'import calc\nimport pytest\n\ndef test_wrong():\n    assert calc.add(2, 2) == 5, "two and two"\n\n@pytest.mark.skip(reason="not yet")\ndef test_later():\n    pass\n',
)
write(
  join(global, 'test_calc_broken.py'),
  'import calc\nimport definitely_not_installed\n\ndef test_never():\n    pass\n',
)

write(
  join(local, 'pkgext', 'extension.py'),
  extension(
    'pkgext',
    'from .core import double\n\ndef twice(x):\n    """Doubles."""\n    return double(x)\n',
    ', tools=[twice]',
  ),
)
write(join(local, 'pkgext', 'core.py'), 'def double(x):\n    return 2 * x\n')
write(
  join(local, 'pkgext', 'tests', 'test_core.py'),
  'from pkgext.core import double\nfrom pkgext.extension import twice\n\ndef test_double():\n    assert double(4) == 8\n\ndef test_twice():\n    assert twice(5) == 10\n',
)
write(join(global, 'untested.py'), extension('untested', ''))

test('passing, failing, skipped and unimportable test files give one record each', async () => {
  const [r] = await runExtensionTests({ home, project, python, name: 'calc' })
  assert.ok(r)
  assert.deepEqual(
    r.files.map((f) => f.slice(global.length + 1)),
    ['calc_test.py', 'test_calc.py', 'test_calc_broken.py'],
  )
  const by = new Map(r.records.map((x) => [x.nodeid, x]))
  assert.equal(by.get('test_calc.py::test_add')?.outcome, 'passed')
  assert.equal(by.get('test_calc.py::test_neg')?.outcome, 'passed')
  assert.equal(by.get('calc_test.py::test_wrong')?.outcome, 'failed')
  assert.match(by.get('calc_test.py::test_wrong')?.message ?? '', /two and two/)
  assert.equal(by.get('calc_test.py::test_later')?.outcome, 'skipped')
  const broken = by.get('test_calc_broken.py')
  assert.equal(broken?.outcome, 'error', 'an unimportable file is a reported failure')
  assert.match(broken?.message ?? '', /No module named 'definitely_not_installed'/)
  assert.equal(broken?.file, join(global, 'test_calc_broken.py'))
  assert.deepEqual(r.counts, { passed: 2, failed: 1, errors: 1, skipped: 1, total: 5 })
  assert.equal(r.ok, false)
})

test('a package extension imports itself in its tests the way the loader does', async () => {
  const [r] = await runExtensionTests({ home, project, python, name: 'pkgext' })
  assert.ok(r)
  assert.deepEqual(r.counts, { passed: 2, failed: 0, errors: 0, skipped: 0, total: 2 })
  assert.equal(r.ok, true)
  // The tests run from the trusted copy in the vis home, never from the project folder itself.
  const file = r.records[0]?.file ?? ''
  assert.ok(file.startsWith(`${trustedCopiesDir(home)}${sep}`), file)
  assert.ok(file.endsWith(join('pkgext', 'tests', 'test_core.py')), file)
  assert.ok(!file.startsWith(local), file)
})

test('an extension with no tests is reported as such; an unknown name is an error', async () => {
  const all = await runExtensionTests({ home, project, python, name: 'untested' })
  assert.equal(all[0]?.noTests, true)
  await assert.rejects(runExtensionTests({ home, project, python, name: 'nope' }), /no extension named nope/)
  assert.deepEqual(
    testFilesOf({
      key: 'untested',
      scope: 'global',
      kind: 'file',
      path: join(global, 'untested.py'),
      dir: global,
    }),
    [],
  )
})

function childEnv(visHome = home): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, VIS_HOME: visHome }
  // Otherwise the child believes it is a test file of this run.
  delete env.NODE_TEST_CONTEXT
  return env
}

// The real CLI in a child process, as a person runs it.
function vis(args: string[], visHome = home): Promise<{ code: number; stdout: string }> {
  const main = new URL('../../src/cli/main.ts', import.meta.url).href
  const script = `import(${JSON.stringify(main)}).then((m) => m.main(process.argv.slice(1)))`
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '-e', script, ...args],
      { cwd: packageRoot, env: childEnv(visHome) },
      (err, stdout) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout }),
    )
  })
}

test('vis ext test and vis ext list: exit status follows the records and the warnings', async () => {
  const args = ['--project', project, ...(python ? ['--python', python] : [])]
  const pass = await vis(['ext', 'test', 'pkgext', ...args])
  assert.equal(pass.code, 0, pass.stdout)
  assert.match(pass.stdout, /pkgext: 2 passed, 0 failed, 0 errors, 0 skipped/)
  // Nothing to test is said, not printed as silence.
  const none = await vis(['ext', 'test', '--project', join(base, 'no-project')], join(base, 'empty-home'))
  assert.equal(none.code, 0, none.stdout)
  assert.equal(none.stdout, 'no extensions to test in any extension directory\n')
  const fail = await vis(['ext', 'test', 'calc', ...args])
  assert.equal(fail.code, 1)
  assert.match(fail.stdout, /calc: 2 passed, 1 failed, 1 errors, 1 skipped/)
  assert.match(fail.stdout, /FAILED calc_test\.py::test_wrong: .*two and two/)
  assert.match(fail.stdout, /ERROR test_calc_broken\.py: .*definitely_not_installed/)
  const list = await vis(['ext', 'list', ...args, '--json'])
  assert.equal(list.code, 0)
  const listed = JSON.parse(list.stdout)
  assert.deepEqual(listed.loaded.map((e: { name: string }) => e.name).sort(), ['calc', 'pkgext', 'untested'])
  assert.deepEqual(listed.loaded.find((e: { name: string }) => e.name === 'calc').tools, ['calc_add(a, b)'])
  assert.equal((await vis(['ext', 'frobnicate'])).code, 2)
})
