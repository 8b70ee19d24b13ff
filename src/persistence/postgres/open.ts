// Opening the PostgreSQL backend: which URL selects it, connecting, migrating, and the cheap
// integrity check Store.integrityCheck() runs there.
import { VisError } from '../../util/errors.js'
import type { Migration } from '../migrations.js'
import type { Db } from '../statements.js'
import { PgDatabase } from './database.js'
import { migratePostgres, PG_MIGRATIONS } from './migrations.js'
import { redactUrl } from './sync-client.js'

// The PostgreSQL URL to use, or undefined for SQLite: the option wins over VIS_DATABASE_URL; an
// empty value means SQLite. Anything else that is not postgres:// is refused, not ignored: a
// mistyped URL must not silently put a cluster's state in one node's home.
export function databaseUrlOf(option: string | undefined): string | undefined {
  const url = (option ?? process.env.VIS_DATABASE_URL ?? '').trim()
  if (url === '') return undefined
  if (/^postgres(ql)?:\/\//i.test(url)) return url
  throw new VisError(
    'db.unsupported-url',
    `VIS_DATABASE_URL must be a postgres:// or postgresql:// URL (got ${redactUrl(url)}). Unset it to use SQLite under the vis home.`,
    { url: redactUrl(url) },
  )
}

export type OpenPostgresOptions = {
  queryTimeoutMs?: number
  migrations?: readonly Migration[]
}

export function openPostgres(url: string, options: OpenPostgresOptions = {}): PgDatabase {
  const db = new PgDatabase(
    url,
    options.queryTimeoutMs === undefined ? {} : { timeoutMs: options.queryTimeoutMs },
  )
  try {
    // A commit must be on the server's disk before it returns: that is what lets Store.synced()
    // resolve at once here. Set per connection so a server default of `off` cannot weaken it.
    db.exec('SET synchronous_commit = on')
  } catch (err) {
    db.close()
    throw new VisError(
      'db.open-failed',
      `Cannot open the PostgreSQL database ${db.name}: ${(err as Error).message}`,
      { url: db.name },
      { cause: err },
    )
  }
  try {
    migratePostgres(db, options.migrations ?? PG_MIGRATIONS)
    return db
  } catch (err) {
    db.close()
    throw err
  }
}

// What no constraint guards: a session whose event counter is behind its own log would hand out
// a seq twice. ['ok'] when none is.
export function postgresIntegrity(db: Db): string[] {
  const behind = db
    .prepare(
      `SELECT s.id FROM sessions s JOIN session_events e ON e.session_id = s.id
       GROUP BY s.id, s.event_seq HAVING max(e.seq) > s.event_seq ORDER BY s.id`,
    )
    .pluck()
    .all() as string[]
  return behind.length === 0 ? ['ok'] : behind.map((id) => `session ${id}: event_seq is behind its event log`)
}
