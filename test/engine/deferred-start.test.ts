// A sync block's deferred row (EventLog.deferStart) is not lost when it cannot be stored at
// once: another process holding SQLite's write lock past the busy timeout makes the flush fail,
// and the row is stored once the lock is free, while the block still runs and with its finish.
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import Database from 'better-sqlite3'
import { createEngine } from '../../src/engine/index.js'
import { isVisError } from '../../src/util/errors.js'

const python = process.env.VIS_PYTHON_VERSION

async function waitFor(cond: () => boolean, what: string, ms = 30_000): Promise<void> {
  const until = Date.now() + ms
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

test('a deferred block row that meets a locked database is stored once the lock is free', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-engine-deferred-'))
  process.env.VIS_HOME = home
  // The session's root: the jailed worker may write there.
  const root = mkdtempSync(join(tmpdir(), 'vis-engine-deferred-root-'))
  const marker = join(root, 'started')
  const stop = join(root, 'stop')
  const engine = await createEngine({ home, python, pool: { size: 0 } })
  const other = new Database(join(home, 'vis.db'))
  try {
    const s = await engine.createSession({ roots: [root] })
    assert.equal((await engine.runBlock(s.id, { code: 'y = 0' })).block.error, null)
    // Fail fast instead of waiting 5 s for the lock: the flush then fails like a long-held lock.
    engine.store.sqlite!.pragma('busy_timeout = 20')
    other.exec('BEGIN IMMEDIATE')
    const code = [
      'import os, time',
      `open(${JSON.stringify(marker)}, "w").close()`,
      `while not os.path.exists(${JSON.stringify(stop)}):`,
      '    time.sleep(0.01)',
    ].join('\n')
    const submitted = await engine.submitBlock(s.id, { code })
    const id = submitted.block.id
    await waitFor(() => existsSync(marker), 'the block to run')
    // The lock is held: the row cannot be stored yet, so nobody can read it.
    assert.throws(
      () => engine.sessionBlock(s.id, id),
      (e: unknown) => isVisError(e, 'block.not-found'),
    )
    other.exec('ROLLBACK')
    engine.store.sqlite!.pragma('busy_timeout = 5000')
    // Free again: the row kept in the batch is stored by the next flush, while the block runs.
    await waitFor(() => {
      const row = other.prepare('SELECT status FROM blocks WHERE id = ?').pluck().get(id)
      return row === 'running'
    }, 'the running row after the lock was freed')
    assert.equal(engine.sessionBlock(s.id, id).status, 'running')
    writeFileSync(stop, '')
    const done = await submitted.done
    assert.equal(done.status, 'done')
    assert.equal(done.error, null)
    assert.equal(other.prepare('SELECT status FROM blocks WHERE id = ?').pluck().get(id), 'done')
  } finally {
    if (other.inTransaction) other.exec('ROLLBACK')
    other.close()
    await engine.close()
  }
})
