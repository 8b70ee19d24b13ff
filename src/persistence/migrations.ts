import { VisError } from '../util/errors.js'
import { compileMigrations } from './schema/ddl.js'
import type { Migration } from './schema/define.js'
import type { SqliteDb as Db } from './statements.js'

export type { Migration } from './schema/define.js'

// Compiled from the one schema definition (schema/tables.ts); PostgreSQL's list comes from the
// same source. Tables are STRICT so a wrong type is refused by SQLite itself, not just by our zod
// schemas.
export const MIGRATIONS: readonly Migration[] = compileMigrations('sqlite')

export function latestVersion(migrations: readonly Migration[] = MIGRATIONS): number {
  return migrations.reduce((max, m) => Math.max(max, m.version), 0)
}

export function schemaVersion(db: Db): number {
  return db.pragma('user_version', { simple: true }) as number
}

function refuseNewer(db: Db, version: number, known: number): void {
  if (version > known) {
    throw new VisError(
      'db.schema-newer',
      `The database ${db.name} has schema version ${version}, but this vis-runtime knows only up to ${known}. ` +
        'Upgrade vis-runtime, or point VIS_HOME at another directory.',
      { path: db.name, version, known },
    )
  }
}

// Brings the schema up to `target` (default: the newest known). All pending steps run in one
// IMMEDIATE transaction, so a failure leaves the previous version whole and two processes
// opening the same file at once cannot both migrate.
export function migrate(db: Db, migrations: readonly Migration[] = MIGRATIONS, target?: number): number {
  const known = latestVersion(migrations)
  const goal = target ?? known
  refuseNewer(db, schemaVersion(db), known)
  const run = db.transaction(() => {
    const current = schemaVersion(db)
    refuseNewer(db, current, known)
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
          { path: db.name, version: m.version },
          { cause: err },
        )
      }
      db.pragma(`user_version = ${m.version}`)
    }
    return schemaVersion(db)
  })
  return run.immediate()
}
