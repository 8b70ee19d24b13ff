// Group commit: callers that arrive together share one fsync; a caller arriving while one runs
// gets the next (its commit may postdate the running fsync's start), never an earlier one.
// The fsync runs inline while the disk is fast and through the thread pool when it is not.
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { GroupCommit } from '../../src/persistence/group-commit.js'

function tempWal(): string {
  const wal = join(mkdtempSync(join(tmpdir(), 'vis-group-commit-')), 'vis.db-wal')
  writeFileSync(wal, 'frames')
  return wal
}

test('callers of one event-loop turn share one fsync; a fast disk is synced inline', async () => {
  // Every disk counts as fast here: a loaded CI disk must not turn this into a test of the pool.
  const g = new GroupCommit(tempWal(), { inlineMaxUs: Number.POSITIVE_INFINITY })
  const turn = [g.sync(), g.sync(), g.sync()]
  assert.equal(new Set(turn).size, 1, 'one turn, one group')
  await turn[0]
  assert.deepEqual(g.stats, { inline: 1, pooled: 0 })
  // Idle again: a new caller gets a new fsync.
  const later = g.sync()
  assert.notEqual(later, turn[0])
  await later
  assert.deepEqual(g.stats, { inline: 2, pooled: 0 })
  g.close()
})

test('through the pool: a caller arriving while the fsync runs gets the next one, in order', async () => {
  const g = new GroupCommit(tempWal(), { inlineMaxUs: 0 })
  const first = g.sync()
  // The fsync starts at the end of this turn; once it has, later callers cannot ride on it.
  await new Promise((r) => setImmediate(r))
  assert.equal(g.stats.pooled, 1)
  const during = [g.sync(), g.sync()]
  assert.notEqual(during[0], first, 'a waiter during an fsync does not ride on it')
  assert.equal(new Set(during).size, 1, 'they share the next one')
  const order: string[] = []
  first.then(() => order.push('first'))
  during[0]!.then(() => order.push('next'))
  await Promise.all([first, ...during])
  assert.deepEqual(order, ['first', 'next'])
  assert.deepEqual(g.stats, { inline: 0, pooled: 2 })
  g.close()
})

test('a slow disk moves the fsyncs to the pool', async () => {
  // Any real fsync takes longer than 0.001 us: after the first inline one, the rest go to the pool.
  const g = new GroupCommit(tempWal(), { inlineMaxUs: 0.001 })
  await g.sync()
  await g.sync()
  await g.sync()
  assert.deepEqual(g.stats, { inline: 1, pooled: 2 })
  g.close()
})

test('no WAL yet means nothing to wait for', async () => {
  const g = new GroupCommit(join(mkdtempSync(join(tmpdir(), 'vis-group-commit-')), 'absent-wal'))
  await g.sync()
  assert.deepEqual(g.stats, { inline: 0, pooled: 0 })
  g.close()
})
