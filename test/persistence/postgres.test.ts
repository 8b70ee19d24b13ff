// What only the PostgreSQL backend has: its own migrations (same versions, same tables as
// SQLite), the advisory lock that lets several nodes start together, the synchronous driver's
// errors (a lost connection is an error, never a hang), and the URL that selects it.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { latestVersion, MIGRATIONS, type Migration, Store } from '../../src/persistence/index.js'
import { PgDatabase } from '../../src/persistence/postgres/database.js'
import { PG_MIGRATIONS, pgSchemaVersion } from '../../src/persistence/postgres/migrations.js'
import { toPostgresPlaceholders } from '../../src/persistence/postgres/translate.js'
import { isVisError } from '../../src/util/errors.js'
import { freshDatabaseUrl, postgresServer } from '../helpers/postgres.js'
import { openTempStore, tempHome, tempPlace } from './helpers.js'
import { race } from './race.js'

const pgTables = (db: PgDatabase): string[] =>
  db
    .prepare(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name <> 'schema_version' ORDER BY table_name",
    )
    .pluck()
    .all() as string[]

const pgColumns = (db: PgDatabase, table: string): string[] =>
  db
    .prepare('SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY column_name')
    .pluck()
    .all(table) as string[]

test('PostgreSQL gets the same versions, tables and columns as SQLite', () => {
  assert.deepEqual(
    PG_MIGRATIONS.map((m) => [m.version, m.name]),
    MIGRATIONS.map((m) => [m.version, m.name]),
  )
  const sqlite = openTempStore()
  const store = new Store(tempPlace('postgres'))
  try {
    assert.equal(store.dialect, 'postgres')
    const pg = store.db as PgDatabase
    assert.equal(pgSchemaVersion(pg), latestVersion())
    const lite = sqlite.sqlite!
    const liteTables = (
      lite
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .pluck()
        .all() as string[]
    ).filter((n) => !n.startsWith('sqlite_'))
    assert.deepEqual(pgTables(pg), liteTables)
    for (const table of liteTables) {
      const cols = lite
        .prepare(`SELECT name FROM pragma_table_info('${table}') ORDER BY name`)
        .pluck()
        .all() as string[]
      assert.deepEqual(pgColumns(pg, table), cols, table)
    }
    // json_valid() reads as on SQLite in the CHECKs.
    assert.equal(pg.prepare('SELECT json_valid(\'{"a": [1]}\')').pluck().get(), true)
    assert.equal(pg.prepare("SELECT json_valid('{nope')").pluck().get(), false)
    assert.deepEqual(store.integrityCheck(), ['ok'])
  } finally {
    store.close()
  }
})

test('a schema newer than the code is refused with db.schema-newer and left untouched', () => {
  const place = tempPlace('postgres')
  new Store(place).close()
  const admin = new PgDatabase(place.databaseUrl)
  admin.exec('UPDATE schema_version SET version = 99; CREATE TABLE from_the_future (x INTEGER)')
  assert.throws(
    () => new Store(place),
    (err: unknown) =>
      isVisError(err, 'db.schema-newer') &&
      err.context.version === 99 &&
      err.context.known === latestVersion() &&
      /Upgrade vis-runtime/.test(err.message),
  )
  assert.equal(pgSchemaVersion(admin), 99)
  assert.ok(pgTables(admin).includes('from_the_future'))
  admin.close()
})

test('a failing migration rolls back entirely and leaves the previous version', () => {
  const place = tempPlace('postgres')
  const broken: Migration[] = [
    ...PG_MIGRATIONS,
    { version: 100, name: 'half done', sql: 'CREATE TABLE half (x INTEGER); SELECT no_such_function()' },
  ]
  assert.throws(
    () => new Store({ ...place, migrations: broken }),
    (err: unknown) => isVisError(err, 'db.migration-failed') && err.context.version === 100,
  )
  const admin = new PgDatabase(place.databaseUrl)
  try {
    // Not even the first steps stayed: everything pending ran in one transaction.
    assert.equal(pgSchemaVersion(admin), 0)
    assert.deepEqual(pgTables(admin), [])
  } finally {
    admin.close()
  }
  const store = new Store(place)
  assert.equal(pgSchemaVersion(store.db), latestVersion())
  store.close()
})

test('three nodes opening a fresh database at once migrate it once, and all start', {
  timeout: 120_000,
}, async () => {
  const place = tempPlace('postgres')
  const results = await race(
    place,
    [1, 2, 3].map(() => ['open', '-', '-']),
    [1, 2, 3].map(() => tempHome()),
  )
  assert.deepEqual(results, [{ opened: true }, { opened: true }, { opened: true }])
  const store = new Store(place)
  assert.equal(pgSchemaVersion(store.db), latestVersion())
  store.close()
})

test('a lost connection is an error at once, not a hang, and stays one', { timeout: 120_000 }, () => {
  // A query timeout far beyond the test's own: only the server's goodbye can end these calls in
  // time, so a driver that waited instead of reporting it fails the test.
  const store = new Store({ ...tempPlace('postgres'), queryTimeoutMs: 3_600_000 })
  const s = store.sessions.create()
  const admin = new PgDatabase(postgresServer().url('postgres'))
  try {
    const killed = admin
      .prepare(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ? AND pid <> pg_backend_pid()',
      )
      .pluck()
      .all(`vis-runtime pid ${process.pid}`) as boolean[]
    assert.ok(killed.includes(true))
    assert.throws(
      () => store.sessions.get(s.id),
      (e: unknown) => isVisError(e, 'db.connection-lost') && !/password/.test(e.message),
    )
    assert.throws(
      () => store.blocks.start({ sessionId: s.id, code: 'x' }),
      (e: unknown) => isVisError(e, 'db.connection-lost'),
    )
  } finally {
    admin.close()
    store.close()
  }
})

test('a server that stops answering is db.connection-lost after queryTimeoutMs, not a hang', () => {
  const store = new Store({ ...tempPlace('postgres'), queryTimeoutMs: 1_000 })
  try {
    // A query that outlives the timeout stands for a frozen server or a cut network.
    assert.throws(
      () => store.db.prepare('SELECT pg_sleep(30)').run(),
      (e: unknown) => isVisError(e, 'db.connection-lost') && /within 1000 ms/.test(e.message),
    )
    // The connection is not reused in an unknown state.
    assert.throws(
      () => store.sessions.count(),
      (e: unknown) => isVisError(e, 'db.connection-lost'),
    )
  } finally {
    store.close()
  }
})

test('commits are durable when they return: lazily() just runs, synced() resolves at once', async () => {
  const store = new Store(tempPlace('postgres'))
  try {
    const s = store.lazily(() => store.sessions.create({ title: 'lazy' }))
    await store.synced()
    assert.equal(store.sessions.require(s.id).title, 'lazy')
    assert.equal(store.db.prepare('SHOW synchronous_commit').pluck().get(), 'on')
  } finally {
    store.close()
  }
})

test('the integrity check reports an event counter behind its log', () => {
  const store = new Store(tempPlace('postgres'))
  try {
    const s = store.sessions.create()
    store.events.append(s.id, { type: 'a' })
    store.events.append(s.id, { type: 'b' })
    assert.deepEqual(store.integrityCheck(), ['ok'])
    store.db.prepare('UPDATE sessions SET event_seq = 1 WHERE id = ?').run(s.id)
    assert.deepEqual(store.integrityCheck(), [`session ${s.id}: event_seq is behind its event log`])
  } finally {
    store.close()
  }
})

test('no server behind the URL is db.open-failed; a URL that is not postgres:// is refused', () => {
  const home = tempHome()
  // The test server's port with a database that does not exist, and a port nobody listens on.
  const missing = postgresServer().url('no_such_database')
  assert.throws(
    () => new Store({ home, databaseUrl: missing }),
    (e: unknown) => isVisError(e, 'db.open-failed') && /no_such_database/.test(e.message),
  )
  assert.throws(
    () => new Store({ home, databaseUrl: 'postgres://vis:secret@127.0.0.1:1/x' }),
    (e: unknown) =>
      isVisError(e, 'db.open-failed') && !e.message.includes('secret') && e.message.includes('***'),
  )
  assert.throws(
    () => new Store({ home, databaseUrl: 'mysql://vis@127.0.0.1/x' }),
    (e: unknown) => isVisError(e, 'db.unsupported-url'),
  )
  // Unset (empty) is SQLite, as without VIS_DATABASE_URL.
  const store = new Store({ home, databaseUrl: '' })
  assert.equal(store.dialect, 'sqlite')
  store.close()
})

test('VIS_DATABASE_URL selects PostgreSQL when no option is given', () => {
  const url = freshDatabaseUrl()
  const before = process.env.VIS_DATABASE_URL
  process.env.VIS_DATABASE_URL = url
  try {
    const store = new Store({ home: tempHome() })
    assert.equal(store.dialect, 'postgres')
    assert.equal(store.sqlite, undefined)
    store.close()
  } finally {
    if (before === undefined) delete process.env.VIS_DATABASE_URL
    else process.env.VIS_DATABASE_URL = before
  }
})

test('placeholders become $n outside literals, quoted names and comments', () => {
  assert.equal(
    toPostgresPlaceholders(`SELECT '?', "a?" , ? -- what?\n, ? /* ? */ FROM t WHERE x = 'it''s ?' AND y = ?`),
    `SELECT '?', "a?" , $1 -- what?\n, $2 /* ? */ FROM t WHERE x = 'it''s ?' AND y = $3`,
  )
})

test('a NUL character in text is stored as U+FFFD on PostgreSQL instead of failing the block', () => {
  const store = openTempStore({}, 'postgres')
  const s = store.sessions.create()
  const { block } = store.blocks.start({ sessionId: s.id, code: 'print("a\\0b")' })
  const done = store.blocks.finish(block.id, { stdout: 'a\0b\n', result: 'x\0y', durationMs: 1 })
  assert.equal(done.stdout, 'a\uFFFDb\n')
  // JSON escapes it (\u0000), so results keep the NUL exactly.
  assert.equal(done.result, 'x\0y')
})

test('types come back as the repositories expect: numbers, Buffers, null', () => {
  const db = new PgDatabase(freshDatabaseUrl())
  try {
    const row = db
      .prepare(
        "SELECT 1796149160442::bigint AS ms, count(*) AS n, 2.5::float8 AS f, '\\x00ff'::bytea AS b, NULL AS nothing FROM (VALUES (1), (2)) v",
      )
      .get() as Record<string, unknown>
    assert.deepEqual(row, { ms: 1796149160442, n: 2, f: 2.5, b: Buffer.from([0, 255]), nothing: null })
    assert.ok(Buffer.isBuffer(row.b))
    const echoed = db.prepare('SELECT ?::bytea').pluck().get(Buffer.from('héllo')) as Buffer
    assert.equal(echoed.toString(), 'héllo')
    // A failed statement names itself and PostgreSQL's SQLSTATE.
    assert.throws(
      () => db.prepare('SELECT * FROM nowhere').all(),
      (e: unknown) =>
        isVisError(e, 'db.query-failed') && e.context.pgCode === '42P01' && /nowhere/.test(e.message),
    )
    // Nested transactions are savepoints: the inner one rolls back alone.
    db.exec('CREATE TABLE t (x INTEGER)')
    db.transaction(() => {
      db.prepare('INSERT INTO t VALUES (?)').run(1)
      assert.throws(() =>
        db.transaction(() => {
          db.prepare('INSERT INTO t VALUES (?)').run(2)
          throw new Error('inner')
        })(),
      )
      assert.equal(db.inTransaction, true)
    })()
    assert.deepEqual(db.prepare('SELECT x FROM t').pluck().all(), [1])
    assert.equal(db.inTransaction, false)
  } finally {
    db.close()
  }
})
