import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { identityOf, liveJailEntry, liveJailsDir } from '../../src/util/live-jails.js'
import { realish } from '../../src/util/real-path.js'
import { startTimeOf } from '../../src/util/vis-processes.js'
import { otherProcessWrites, writableRootHolding } from '../../src/util/writable-roots.js'

// A live jail's root holds a path by its path, and still after the root was renamed (by its
// identity); a path beside the root is held by none. The jail is this process's own entry in the
// user's live-jail registry, removed at the end.
test('a live jail root holds paths beneath it by path, and by identity once renamed', () => {
  const base = realish(mkdtempSync(join(tmpdir(), 'vis-writable-roots-')))
  const root = join(base, 'r')
  mkdirSync(join(root, 'sub'), { recursive: true })
  mkdirSync(join(base, 'beside'))
  const fd = openSync(root, 'r')
  const entry = liveJailEntry([{ real: root, fd }])
  try {
    entry.announce()
    entry.settle([])
    assert.equal(writableRootHolding(join(root, 'sub', 'tool')), root)
    assert.equal(writableRootHolding(join(root, 'not-made-yet', 'x')), root)
    assert.equal(writableRootHolding(join(base, 'beside', 'tool')), undefined)
    renameSync(root, join(base, 'renamed'))
    // The entry still names the old path; the directory is found by what it is.
    assert.equal(writableRootHolding(join(base, 'renamed', 'sub', 'tool')), root)
    assert.equal(writableRootHolding(join(base, 'beside', 'tool')), undefined)
    entry.remove()
    assert.equal(writableRootHolding(join(base, 'renamed', 'sub', 'tool')), undefined)
  } finally {
    entry.remove()
    closeSync(fd)
    rmSync(base, { recursive: true, force: true })
  }
})

// Another vis process's jail binds its own package and dependency directories read-only over its
// roots (its entry's readOnly): a root of a process of THIS install above the checkout does not make
// the package that sandbox's (the fresh-clone CI: a concurrent test file's session on a folder holding
// the checkout refused esbuild, `cannot bundle`, and its MCP servers started from the package). A
// process of another install binds its own package, not this one: there the package is writable.
test("another process's jail writes a root above the package, but not what it binds read-only", () => {
  const base = realish(mkdtempSync(join(tmpdir(), 'vis-writable-roots-ro-')))
  const root = join(base, 'above')
  const pkg = join(root, 'pkg')
  mkdirSync(join(pkg, 'node_modules', 'esbuild'), { recursive: true })
  mkdirSync(join(root, 'src'))
  symlinkSync(join(pkg, 'node_modules'), join(root, 'src', 'to-deps'))
  // A live process of this user that is not this one: its entry is judged by its pid and start time.
  const other = spawn('sleep', ['600'], { stdio: 'ignore' })
  const file = () => join(liveJailsDir(), `${other.pid}-${startTimeOf(other.pid!)}-0a1b2c3d4e5f.json`)
  const enter = (readOnly: string[]) =>
    writeFileSync(
      file(),
      JSON.stringify({
        pid: other.pid,
        starttime: startTimeOf(other.pid!),
        roots: [root],
        // As a real entry: the root's identity too (a session on the package itself, in the CI).
        rootIds: [identityOf(root)],
        masked: [],
        maskedIds: [],
        readOnly,
      }),
    )
  try {
    mkdirSync(liveJailsDir(), { recursive: true })
    enter([pkg])
    const inPkg = join(pkg, 'node_modules', 'esbuild', 'lib', 'main.js')
    assert.equal(writableRootHolding(inPkg), undefined, 'bound read-only in that jail')
    assert.equal(otherProcessWrites(inPkg), false)
    assert.equal(writableRootHolding(join(root, 'src', 'x.py')), root, 'the rest of its root is still its')
    // A link in the root into the read-only place is the root's: the sandbox re-points it.
    assert.equal(writableRootHolding(join(root, 'src', 'to-deps', 'esbuild', 'x.js')), root)
    // Renamed since the jail began, the root is found by its identity only: no read-only place
    // recorded by name is trusted then.
    renameSync(root, `${root}-moved`)
    assert.equal(writableRootHolding(join(`${root}-moved`, 'pkg', 'node_modules', 'esbuild', 'x.js')), root)
    renameSync(`${root}-moved`, root)
    // An entry of another install (or an older vis) binds nothing of this package read-only.
    enter([])
    assert.equal(writableRootHolding(inPkg), root)
    assert.equal(otherProcessWrites(inPkg), true)
  } finally {
    rmSync(file(), { force: true })
    other.kill()
    rmSync(base, { recursive: true, force: true })
  }
})
