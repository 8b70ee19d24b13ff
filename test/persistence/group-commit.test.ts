// Group commit: callers that arrive together share one fsync; a caller arriving while one runs
// gets the next (its commit may postdate the running fsync's start), never an earlier one.
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { GroupCommit } from '../../src/persistence/group-commit.js'

test('waiters share fsyncs: the first starts one, everyone during it shares the next', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vis-group-commit-'))
  const wal = join(dir, 'vis.db-wal')
  writeFileSync(wal, 'frames')
  const g = new GroupCommit(wal)
  const first = g.sync()
  const during = [g.sync(), g.sync(), g.sync()]
  assert.notEqual(during[0], first, 'a waiter during an fsync does not ride on it')
  assert.equal(new Set(during).size, 1, 'they all share the next one')
  const order: string[] = []
  first.then(() => order.push('first'))
  during[0]!.then(() => order.push('next'))
  await Promise.all([first, ...during])
  assert.deepEqual(order, ['first', 'next'])
  // Idle again: a new caller starts a new fsync at once.
  const later = g.sync()
  assert.notEqual(later, during[0])
  await later
  g.close()
})

test('no WAL yet means nothing to wait for', async () => {
  const g = new GroupCommit(join(mkdtempSync(join(tmpdir(), 'vis-group-commit-')), 'absent-wal'))
  await g.sync()
  g.close()
})
