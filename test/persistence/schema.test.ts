// Issue 35 §7: the schema is defined once (src/persistence/schema/tables.ts) and compiled into both
// dialects' DDL. Real databases are read back here: a fresh SQLite file and a fresh PostgreSQL
// database (the test server from test/helpers/postgres.ts) must end with exactly the tables,
// columns, keys, checks and indexes the definition declares, and therefore the same as each other;
// and a database migrated one version at a time must end where a fresh one does.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { test } from 'node:test'
import Database from 'better-sqlite3'
import { MIGRATIONS, migrate } from '../../src/persistence/migrations.js'
import { PgDatabase } from '../../src/persistence/postgres/database.js'
import { migratePostgres, PG_MIGRATIONS, pgSchemaVersion } from '../../src/persistence/postgres/migrations.js'
import { SCHEMA } from '../../src/persistence/schema/tables.js'
import { freshDatabaseUrl } from '../helpers/postgres.js'
import { tempHome } from './helpers.js'
import { expectedShape, neutral, pgShape, sqliteShape } from './schema-shape.js'

const freshSqlite = (): Database.Database => {
  const db = new Database(join(tempHome(), 'vis.db'))
  migrate(db, MIGRATIONS)
  return db
}

const freshPostgres = (): PgDatabase => {
  const db = new PgDatabase(freshDatabaseUrl())
  migratePostgres(db, PG_MIGRATIONS)
  return db
}

test('both dialects are compiled from the one definition: same versions, same names', () => {
  const versions = SCHEMA.map((v) => [v.version, v.name])
  assert.deepEqual(
    MIGRATIONS.map((m) => [m.version, m.name]),
    versions,
  )
  assert.deepEqual(
    PG_MIGRATIONS.map((m) => [m.version, m.name]),
    versions,
  )
})

test('SQLite and PostgreSQL end with the tables, columns, keys, checks and indexes the definition declares', () => {
  const lite = freshSqlite()
  const pg = freshPostgres()
  try {
    const liteShape = sqliteShape(lite)
    const pgReadBack = pgShape(pg)
    assert.deepEqual(liteShape, expectedShape('sqlite'))
    assert.deepEqual(pgReadBack, expectedShape('postgres'))
    // Hence the same as each other, except for how each names a column's type.
    assert.deepEqual(neutral(pgReadBack), neutral(liteShape))
    assert.ok(liteShape.tables.length >= 14 && liteShape.indexes.length >= 8)
  } finally {
    lite.close()
    pg.close()
  }
})

test('a SQLite database at any older version migrates to the same schema as a fresh one', () => {
  const fresh = freshSqlite()
  const want = sqliteShape(fresh)
  fresh.close()
  for (const { version } of MIGRATIONS.slice(0, -1)) {
    const db = new Database(join(tempHome(), 'vis.db'))
    try {
      assert.equal(migrate(db, MIGRATIONS, version), version)
      assert.equal(migrate(db, MIGRATIONS), MIGRATIONS.at(-1)!.version)
      assert.deepEqual(sqliteShape(db), want, `from version ${version}`)
    } finally {
      db.close()
    }
  }
})

test('a PostgreSQL database at any older version migrates to the same schema as a fresh one', () => {
  const fresh = freshPostgres()
  const want = pgShape(fresh)
  fresh.close()
  // Each step here costs a CREATE DATABASE; SQLite walks every version above, these cross each kind
  // of step (tables, added columns, dropped and recreated indexes).
  for (const version of [1, 3, 5, 7]) {
    const db = new PgDatabase(freshDatabaseUrl())
    try {
      assert.equal(
        migratePostgres(
          db,
          PG_MIGRATIONS.filter((m) => m.version <= version),
        ),
        version,
      )
      assert.equal(pgSchemaVersion(db), version)
      assert.equal(migratePostgres(db, PG_MIGRATIONS), PG_MIGRATIONS.at(-1)!.version)
      assert.deepEqual(pgShape(db), want, `from version ${version}`)
    } finally {
      db.close()
    }
  }
})

// Databases in the field already ran every released version, so its DDL must never change: a new
// schema change is a new version. These digests are of the DDL the hand-written migrations held
// before the definition replaced them (whitespace and comments aside), which is what those
// databases contain; a compiler change that altered a released version's DDL fails here.
const RELEASED: Record<'sqlite' | 'postgres', string> = {
  sqlite: '2183ca7ae91d61ee76f4bca5eb8883f4482dc33d166b2db7af002550792382fd',
  postgres: '80d3724d8660407a3b62bd2acde84a4a7efa7a564241e6b129d6284fe5f7186e',
}

const digest = (migrations: readonly { version: number; sql: string }[]): string =>
  createHash('sha256')
    .update(
      migrations
        .filter((m) => m.version <= 8)
        .map(
          (m) =>
            `${m.version}:${m.sql
              .replace(/--[^\n]*/g, '')
              .replace(/\s+/g, ' ')
              .trim()}`,
        )
        .join('\n'),
    )
    .digest('hex')

test('released versions 1..8 compile to the DDL existing databases already ran', () => {
  assert.equal(digest(MIGRATIONS), RELEASED.sqlite)
  assert.equal(digest(PG_MIGRATIONS), RELEASED.postgres)
})
