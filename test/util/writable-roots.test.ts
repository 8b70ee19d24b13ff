import assert from 'node:assert/strict'
import { closeSync, mkdirSync, mkdtempSync, openSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { liveJailEntry } from '../../src/util/live-jails.js'
import { realish } from '../../src/util/real-path.js'
import { writableRootHolding } from '../../src/util/writable-roots.js'

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
