// The guest runtime's bytecode, compiled by the host with the workers' own CPython: written
// beside the sources, accepted by that interpreter at import (and refused once the source
// changes), compiled once, and started workers find the whole of vis-guest/ compiled.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { guestDir } from '../../src/util/home.js'
import {
  compileGuestBytecode,
  guestBytecode,
  pycPath,
  staleSources,
} from '../../src/worker/guest-bytecode.js'
import { pythonHome } from '../../src/worker/python-home.js'
import { Worker } from '../../src/worker/worker.js'
import { normalizePolicy } from '../../src/worker/worker-policy.js'

const scratch = mkdtempSync(join(tmpdir(), 'vis-pyc-'))
after(() => rmSync(scratch, { recursive: true, force: true }))

const minor = process.env.VIS_PYTHON_VERSION

// Imports `name` from dir with the distribution's interpreter, verbose: which file the code
// object came from, and what the module computed.
function importVerbose(python: string, dir: string, name: string): { stderr: string; stdout: string } {
  const r = spawnSync(
    python,
    [
      '-I',
      '-B',
      '-v',
      '-c',
      `import sys; sys.path.insert(0, ${JSON.stringify(dir)}); import ${name}; print(${name}.VALUE)`,
    ],
    { encoding: 'utf8' },
  )
  assert.equal(r.status, 0, r.stderr)
  return { stderr: r.stderr, stdout: r.stdout }
}

test('stale sources are compiled to timestamp pycs the interpreter loads; an edit makes them stale again', async () => {
  const py = await pythonHome(minor)
  const dir = join(scratch, 'guest')
  mkdirSync(join(dir, 'pkg'), { recursive: true })
  writeFileSync(join(dir, 'mod.py'), 'VALUE = 1\n')
  writeFileSync(join(dir, 'pkg', '__init__.py'), '')
  writeFileSync(join(dir, 'pkg', 'inner.py'), 'VALUE = "inner"\n')
  assert.equal(staleSources(dir, py.minor).length, 3, 'nothing is compiled yet')

  assert.deepEqual(await compileGuestBytecode(dir, py), { state: 'compiled' })
  assert.deepEqual(staleSources(dir, py.minor), [])
  const pyc = pycPath(join(dir, 'mod.py'), py.minor)
  assert.match(pyc, new RegExp(`__pycache__/mod\\.cpython-${py.minor.replace('.', '')}\\.pyc$`))
  // Flags 0: a timestamp pyc, validated against the source's mtime and size at import.
  assert.equal(readFileSync(pyc).readUInt32LE(4), 0)
  const loaded = importVerbose(py.executable, dir, 'mod')
  assert.equal(loaded.stdout, '1\n')
  assert.ok(loaded.stderr.includes(`code object from '${pyc}'`), loaded.stderr)

  // Up to date: nothing to compile, no interpreter started.
  assert.deepEqual(await compileGuestBytecode(dir, { ...py, executable: join(scratch, 'no-python') }), {
    state: 'fresh',
  })

  // Edited: the pyc no longer matches; the interpreter compiles the source instead of running
  // the old code, and the next compile brings the pyc up to date.
  writeFileSync(join(dir, 'mod.py'), 'VALUE = 22\n')
  const later = new Date(Date.now() + 5000)
  utimesSync(join(dir, 'mod.py'), later, later)
  assert.deepEqual(staleSources(dir, py.minor), [join(dir, 'mod.py')])
  const edited = importVerbose(py.executable, dir, 'mod')
  assert.equal(edited.stdout, '22\n')
  assert.ok(!edited.stderr.includes(`code object from '${pyc}'`), 'the stale pyc was not used')
  assert.deepEqual(await compileGuestBytecode(dir, py), { state: 'compiled' })
  assert.ok(importVerbose(py.executable, dir, 'mod').stderr.includes(`code object from '${pyc}'`))
})

test('without an interpreter nothing is written and the reason names it; nothing throws', async () => {
  const py = await pythonHome(minor)
  const dir = join(scratch, 'no-interpreter')
  mkdirSync(dir)
  writeFileSync(join(dir, 'mod.py'), 'VALUE = 1\n')
  const missing = join(scratch, 'bin', 'python-missing')
  const r = await compileGuestBytecode(dir, { ...py, executable: missing })
  assert.equal(r.state, 'failed')
  assert.ok(r.state === 'failed' && r.reason.includes(missing), JSON.stringify(r))
  assert.deepEqual(r.state === 'failed' && r.stale, [join(dir, 'mod.py')])
  assert.deepEqual(staleSources(dir, py.minor), [join(dir, 'mod.py')])
})

test('what could not be written is logged once per process, and the next call does not try again', async () => {
  const py = await pythonHome(minor)
  const dir = join(scratch, 'logged')
  mkdirSync(dir)
  writeFileSync(join(dir, 'mod.py'), 'VALUE = 1\n')
  const log = join(scratch, 'pool.log')
  const missing = { ...py, executable: join(scratch, 'bin', 'python-gone') }
  const first = await guestBytecode(dir, missing, log)
  assert.equal(first.state, 'failed')
  const lines = readFileSync(log, 'utf8').trimEnd().split('\n')
  assert.equal(lines.length, 1)
  assert.match(
    lines[0]!,
    /guest bytecode for Python 3\.\d+ not written under .*logged \(1 modules are compiled in every worker instead\): no interpreter at .*python-gone/,
  )
  assert.equal(await guestBytecode(dir, missing, log), first, 'the same answer, not a second attempt')
  assert.equal(readFileSync(log, 'utf8').trimEnd().split('\n').length, 1)
})

test('a source that does not compile leaves its pyc out and says so; the rest are compiled', async () => {
  const py = await pythonHome(minor)
  const dir = join(scratch, 'broken')
  mkdirSync(dir)
  writeFileSync(join(dir, 'good.py'), 'VALUE = 1\n')
  writeFileSync(join(dir, 'bad.py'), 'def (:\n')
  const r = await compileGuestBytecode(dir, py)
  assert.equal(r.state, 'failed')
  assert.deepEqual(r.state === 'failed' && r.stale, [join(dir, 'bad.py')])
  assert.deepEqual(staleSources(dir, py.minor), [join(dir, 'bad.py')])
})

test('a module edited within the second its pyc was written is compiled again', async () => {
  const py = await pythonHome(minor)
  const dir = join(scratch, 'same-second')
  mkdirSync(dir)
  const source = join(dir, 'mod.py')
  writeFileSync(source, 'VALUE = 1\n')
  assert.equal((await compileGuestBytecode(dir, py)).state, 'compiled')
  // The edit keeps the whole-second mtime the pyc's header names; only the size tells.
  const { mtime } = statSync(source)
  writeFileSync(source, 'VALUE = 1234\n')
  utimesSync(source, mtime, mtime)
  assert.deepEqual(staleSources(dir, py.minor), [source])
  assert.equal((await compileGuestBytecode(dir, py)).state, 'compiled')
  assert.deepEqual(staleSources(dir, py.minor), [])
})

test('a started worker finds all of vis-guest/ compiled for its minor', async () => {
  const home = mkdtempSync(join(scratch, 'home-'))
  const root = mkdtempSync(join(scratch, 'root-'))
  // One pyc gone (as after an edit, or in a fresh clone): the first worker's start brings it back.
  const py0 = await pythonHome(minor)
  rmSync(pycPath(join(guestDir, 'vis_guest', 'plots.py'), py0.minor), { force: true })
  assert.ok(staleSources(guestDir, py0.minor).length >= 1)
  const w = await Worker.start({ home, policy: normalizePolicy({ roots: [root] }), python: minor })
  try {
    const py = await pythonHome(minor)
    assert.deepEqual(staleSources(guestDir, py.minor), [])
    // Where the worker's importlib looks for a guest module's bytecode is where it was written.
    const cached = await w.call('eval', { expr: "__import__('sys').modules['vis_guest.block'].__cached__" })
    assert.deepEqual(cached, { ok: true, value: pycPath(join(guestDir, 'vis_guest', 'block.py'), py.minor) })
  } finally {
    await w.close()
  }
})
