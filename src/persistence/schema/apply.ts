// Running compiled migrations, what both dialects do alike: the pending versions in order, each
// recorded as it lands, a failing one named with the version the database stays at. Where the
// version is kept and how the steps are serialised (IMMEDIATE on SQLite, an advisory lock on
// PostgreSQL) stays with each dialect (../migrations.ts, ../postgres/migrations.ts).
import { VisError } from '../../util/errors.js'
import type { Db } from '../statements.js'
import type { Migration } from './define.js'

// Where a message says the database is: its file (SQLite) or its URL without the password.
export type DbPlace = { path: string } | { url: string }

export function latestVersion(migrations: readonly Migration[]): number {
  return migrations.reduce((max, m) => Math.max(max, m.version), 0)
}

export function refuseNewer(db: Db, version: number, known: number, place: DbPlace, remedy: string): void {
  if (version > known) {
    throw new VisError(
      'db.schema-newer',
      `The database ${db.name} has schema version ${version}, but this vis-runtime knows only up to ${known}. ${remedy}`,
      { ...place, version, known },
    )
  }
}

// Runs the migrations above `current` up to `goal`, inside the caller's transaction.
export function applyPending(
  db: Db,
  migrations: readonly Migration[],
  current: number,
  goal: number,
  place: DbPlace,
  record: (version: number) => void,
): void {
  const pending = migrations
    .filter((m) => m.version > current && m.version <= goal)
    .sort((a, b) => a.version - b.version)
  for (const m of pending) {
    try {
      db.exec(m.sql)
    } catch (err) {
      throw new VisError(
        'db.migration-failed',
        `Migration ${m.version} (${m.name}) failed on ${db.name}: ${(err as Error).message}. The database was left at version ${current}.`,
        { ...place, version: m.version },
        { cause: err },
      )
    }
    record(m.version)
  }
}
