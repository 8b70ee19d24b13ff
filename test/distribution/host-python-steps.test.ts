// What `vis runtime stage` runs and reads on the host, both directions (thirteenth outsider pass):
// an archive outside every root stages and records the checksum of what was unpacked; one swapped for
// a link into a root between the check and the open is refused by where the opened file lies (the
// test-only hook makes the swap land there every time); a local CPython lying in a session root is
// neither run nor copied (dist.python-in-root), and the search passes over a planted pyenv version;
// the wheel step still installs from a wheel directory given relative to the caller's folder, whose
// planted `pip` package and PIP_* variables it ignores. Real files, real interpreters, real pip.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { findLocalPython } from '../../src/distribution/discover.js'
import { localSourceTestHooks } from '../../src/distribution/local-source.js'
import { installWheels } from '../../src/distribution/packages/wheels.js'
import { stageFromPython } from '../../src/distribution/stage.js'
import { stageFromArchive } from '../../src/distribution/stage-archive.js'
import type { VisError } from '../../src/util/errors.js'
import { noteSessionRoot } from '../../src/util/host-programs.js'
import { type Fixtures, fixtures, MINOR, sha256, tempDir } from './helpers.js'

let f: Fixtures
const scratch: string[] = []
before(async () => {
  f = await fixtures()
})
after(() => {
  for (const d of scratch) rmSync(d, { recursive: true, force: true })
})

function fresh(prefix: string): string {
  const d = realpathSync(tempDir(prefix))
  scratch.push(d)
  return d
}

test('an archive outside every root stages, and its recorded checksum is that of the file', async () => {
  const out = fresh('vis-stage-archive-out-')
  const archive = join(f.release, f.small.file)
  const res = await stageFromArchive(archive, { out })
  assert.equal(res.minor, MINOR)
  assert.equal(res.sha256, sha256(readFileSync(archive)))
  assert.ok(existsSync(join(res.root, 'bin', `python${MINOR}`)))
  assert.equal(sha256(readFileSync(res.archive!)), res.sha256, 'archives/ holds the bytes that were unpacked')
})

test('an archive swapped for a link into a root between the check and the open is refused', async () => {
  const root = fresh('vis-stage-archive-root-')
  noteSessionRoot(root)
  const out = fresh('vis-stage-archive-out-')
  const outside = fresh('vis-stage-archive-src-')
  const file = join(outside, f.small.file)
  cpSync(join(f.release, f.small.file), file)
  const planted = join(root, f.small.file)
  cpSync(file, planted)
  let swapped = 0
  localSourceTestHooks.beforeOpen = (path) => {
    rmSync(path)
    symlinkSync(planted, path)
    swapped++
  }
  try {
    await assert.rejects(stageFromArchive(file, { out }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'dist.source-in-root', err.message)
      assert.match(err.message, /the archive .* lies inside .*Move the archive outside every session root/)
      return true
    })
  } finally {
    localSourceTestHooks.beforeOpen = undefined
  }
  assert.equal(swapped, 1, 'the swap landed between the check and the open')
  assert.deepEqual(
    readdirSync(out).filter((n) => n !== 'staging'),
    [],
    'nothing staged',
  )
})

// A shell script standing for an interpreter: it leaves a mark if the host ever runs it.
function plantInterpreter(path: string, marker: string): void {
  mkdirSync(join(path, '..'), { recursive: true })
  writeFileSync(path, `#!/bin/sh\necho "ran: $*" >> ${JSON.stringify(marker)}\nexit 1\n`)
  chmodSync(path, 0o755)
}

test('a local CPython inside a session root is neither run nor staged (dist.python-in-root)', async () => {
  const root = fresh('vis-stage-python-root-')
  noteSessionRoot(root)
  const marker = join(fresh('vis-stage-python-marker-'), 'ran')
  const python = join(root, 'bin', `python${MINOR}`)
  plantInterpreter(python, marker)
  await assert.rejects(
    stageFromPython(python, { out: fresh('vis-stage-python-out-') }),
    (err: Error & { code?: string; context?: Record<string, unknown> }) => {
      assert.equal(err.code, 'dist.python-in-root', err.message)
      assert.match(
        err.message,
        /lies inside .*a root a session .* can write.*Install CPython outside every session root/,
      )
      assert.equal(err.context?.root, root)
      return true
    },
  )
  assert.ok(!existsSync(marker), 'the planted interpreter was run')
})

test("the local-CPython search passes over a pyenv version in a root and takes the system's", () => {
  const root = fresh('vis-stage-pyenv-root-')
  noteSessionRoot(root)
  const marker = join(fresh('vis-stage-pyenv-marker-'), 'ran')
  plantInterpreter(join(root, '.pyenv', 'versions', `${MINOR}.99`, 'bin', `python${MINOR}`), marker)
  const saved = process.env.PYENV_ROOT
  process.env.PYENV_ROOT = join(root, '.pyenv')
  try {
    const refused: VisError[] = []
    const found = findLocalPython(MINOR, refused)
    assert.ok(!existsSync(marker), 'the planted interpreter was run')
    assert.equal(refused[0]?.code, 'dist.python-in-root')
    // This machine's own CPython of the minor (the one the suite stages from) is still found.
    assert.ok(found !== undefined, 'a CPython outside every root is still found')
    assert.ok(!found.executable.startsWith(root), found.executable)
  } finally {
    if (saved === undefined) delete process.env.PYENV_ROOT
    else process.env.PYENV_ROOT = saved
  }
})

test("the wheel step installs from a relative wheel directory and ignores the caller's folder and PIP_*", async () => {
  const cwd = fresh('vis-wheels-cwd-')
  const marker = join(fresh('vis-wheels-marker-'), 'ran')
  mkdirSync(join(cwd, 'wheels'))
  const py = [
    'import sys, zipfile',
    "z = zipfile.ZipFile(sys.argv[1] + '/tinypkg-1.0-py3-none-any.whl', 'w')",
    "z.writestr('tinypkg/__init__.py', 'X = 1\\n')",
    "z.writestr('tinypkg-1.0.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: tinypkg\\nVersion: 1.0\\n')",
    "z.writestr('tinypkg-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')",
    "z.writestr('tinypkg-1.0.dist-info/RECORD', '')",
    'z.close()',
  ].join('\n')
  assert.equal(spawnSync('python3', ['-c', py, join(cwd, 'wheels')]).status, 0)
  // What the caller's folder and environment would have pip run or read.
  mkdirSync(join(cwd, 'pip'))
  writeFileSync(join(cwd, 'pip', '__init__.py'), '')
  writeFileSync(join(cwd, 'pip', '__main__.py'), `open(${JSON.stringify(marker)}, 'a').write('cwd pip')\n`)
  const site = fresh('vis-wheels-site-')
  const before = process.cwd()
  const saved = process.env.PIP_REQUIRE_VIRTUALENV
  process.chdir(cwd)
  // Read, it makes pip refuse to install outside a virtualenv: the step would fail.
  process.env.PIP_REQUIRE_VIRTUALENV = 'true'
  try {
    const labels = await installWheels(
      ['tinypkg'],
      MINOR,
      site,
      { indexUrl: './wheels' },
      { onProgress: () => {} },
    )
    assert.deepEqual(labels, ['tinypkg 1.0 (wheel)'])
  } finally {
    process.chdir(before)
    if (saved === undefined) delete process.env.PIP_REQUIRE_VIRTUALENV
    else process.env.PIP_REQUIRE_VIRTUALENV = saved
  }
  assert.ok(readdirSync(site).includes('tinypkg'))
  assert.ok(!existsSync(marker), "the caller's pip package ran")
})
