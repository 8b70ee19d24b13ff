import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import Database from 'better-sqlite3'
import {
  latestVersion,
  MIGRATIONS,
  type Migration,
  migrate,
  openDatabase,
  Store,
  schemaVersion,
} from '../../src/persistence/index.js'
import { isVisError } from '../../src/util/errors.js'
import { tempHome } from './helpers.js'

const tables = (db: Database.Database): string[] =>
  (
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all() as string[]
  ).filter((n) => !n.startsWith('sqlite_'))

test('a fresh home gets vis.db at the newest schema with WAL, FULL sync, foreign keys and a busy timeout', () => {
  const home = tempHome()
  const store = new Store()
  try {
    assert.equal(store.path, join(home, 'vis.db'))
    assert.ok(existsSync(store.path))
    assert.equal(schemaVersion(store.sqlite!), latestVersion())
    assert.equal(latestVersion(), MIGRATIONS.at(-1)!.version)
    assert.deepEqual(tables(store.sqlite!), [
      'approvals',
      'attachments',
      'blocks',
      'drafts',
      'extension_kv',
      'idempotency_keys',
      'iterations',
      'nodes',
      'session_defs',
      'session_events',
      'session_leases',
      'sessions',
      'tool_calls',
      'turns',
    ])
    assert.equal(store.sqlite!.pragma('journal_mode', { simple: true }), 'wal')
    assert.equal(store.sqlite!.pragma('synchronous', { simple: true }), 2) // FULL
    assert.equal(store.sqlite!.pragma('foreign_keys', { simple: true }), 1)
    assert.equal(store.sqlite!.pragma('busy_timeout', { simple: true }), 5000)
  } finally {
    store.close()
  }
  // Reopening an up-to-date database changes nothing.
  const again = new Store({ durability: 'normal' })
  assert.equal(schemaVersion(again.sqlite!), latestVersion())
  assert.equal(again.sqlite!.pragma('synchronous', { simple: true }), 1) // NORMAL on request
  again.close()
})

test('a database left at an older version is migrated on open and keeps its rows', () => {
  const home = tempHome()
  const file = join(home, 'vis.db')
  const old = new Database(file)
  assert.equal(migrate(old, MIGRATIONS, 1), 1)
  assert.ok(!tables(old).includes('session_events'))
  old
    .prepare(
      "INSERT INTO sessions (id, title, policy, created_at) VALUES ('s-old', 'kept', '{\"a\":1}', 1000)",
    )
    .run()
  old.close()

  const store = new Store({ home })
  try {
    assert.equal(schemaVersion(store.sqlite!), latestVersion())
    const s = store.sessions.require('s-old')
    assert.equal(s.title, 'kept')
    assert.deepEqual(s.policy, { a: 1 })
    assert.equal(s.lastEventSeq, 0)
    // The tables the newer version added work on the old rows.
    assert.equal(store.events.append('s-old', { type: 'hello' }).seq, 1)
  } finally {
    store.close()
  }
})

test('migration 3: blocks from version 2 read no survived report; new ones keep theirs', () => {
  const home = tempHome()
  const old = new Database(join(home, 'vis.db'))
  assert.equal(migrate(old, MIGRATIONS, 2), 2)
  old.prepare("INSERT INTO sessions (id, title, policy, created_at) VALUES ('s2', NULL, '{}', 1000)").run()
  old
    .prepare(
      "INSERT INTO blocks (id, session_id, position, code, status, created_at, finished_at) VALUES ('b-old', 's2', 1, 'x = 1', 'done', 1000, 1001)",
    )
    .run()
  old.close()
  const store = new Store({ home })
  try {
    assert.equal(store.blocks.require('b-old').survived, null)
    const b = store.blocks.start({ sessionId: 's2', code: 'while True: pass' }).block
    const survived = {
      cause: 'timeout',
      worker_replaced: true,
      intact: [],
      restored: ['f'],
      lost: ['x'],
      cancelled: [],
    }
    store.blocks.finish(b.id, { durationMs: 2500, timedOut: true, survived })
    assert.deepEqual(store.blocks.require(b.id).survived, survived)
    assert.throws(
      () => store.db.prepare("UPDATE blocks SET survived = 'not json' WHERE id = ?").run(b.id),
      /CHECK/,
    )
  } finally {
    store.close()
  }
})

test('a schema newer than the code is refused with db.schema-newer and left untouched', () => {
  const home = tempHome()
  const file = join(home, 'vis.db')
  const future = new Database(file)
  future.pragma('user_version = 99')
  future.exec('CREATE TABLE from_the_future (x INTEGER)')
  future.close()

  assert.throws(
    () => new Store({ home }),
    (err: unknown) =>
      isVisError(err, 'db.schema-newer') &&
      err.context.version === 99 &&
      err.context.known === latestVersion() &&
      /Upgrade vis-runtime/.test(err.message),
  )
  const check = new Database(file, { readonly: true })
  assert.equal(check.pragma('user_version', { simple: true }), 99)
  assert.deepEqual(tables(check), ['from_the_future'])
  check.close()
})

test('a failing migration rolls back entirely and leaves the previous version', () => {
  const home = tempHome()
  const file = join(home, 'vis.db')
  const broken: Migration[] = [
    ...MIGRATIONS,
    {
      version: 3,
      name: 'half good',
      sql: 'CREATE TABLE good_part (x INTEGER); SELECT * FROM no_such_table;',
    },
  ]
  assert.throws(
    () => openDatabase(file, { migrations: broken }),
    (err: unknown) => isVisError(err, 'db.migration-failed') && err.context.version === 3,
  )
  const db = new Database(file, { readonly: true })
  // Steps 1 and 2 ran in the same transaction as the failed step 3, so nothing at all was applied.
  assert.equal(db.pragma('user_version', { simple: true }), 0)
  assert.deepEqual(tables(db), [])
  db.close()
})

test('a file that is not a database is refused with db.open-failed', async () => {
  const home = tempHome()
  const { writeFileSync } = await import('node:fs')
  writeFileSync(
    join(home, 'vis.db'),
    'this is not sqlite, just text long enough to fill a header page'.repeat(20),
  )
  assert.throws(
    () => new Store({ home }),
    (err: unknown) => isVisError(err, 'db.open-failed') && err.context.path === join(home, 'vis.db'),
  )
})
