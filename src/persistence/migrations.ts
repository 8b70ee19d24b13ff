import { applyPending, latestVersion as latestOf, refuseNewer } from './schema/apply.js'
import { compileMigrations } from './schema/ddl.js'
import type { Migration } from './schema/define.js'
import type { SqliteDb as Db } from './statements.js'

export type { Migration } from './schema/define.js'

// Compiled from the one schema definition (schema/tables.ts); PostgreSQL's list comes from the
// same source. Tables are STRICT so a wrong type is refused by SQLite itself, not just by our zod
// schemas.
export const MIGRATIONS: readonly Migration[] = compileMigrations('sqlite')

export function latestVersion(migrations: readonly Migration[] = MIGRATIONS): number {
  return latestOf(migrations)
}

export function schemaVersion(db: Db): number {
  return db.pragma('user_version', { simple: true }) as number
}

const REMEDY = 'Upgrade vis-runtime, or point VIS_HOME at another directory.'

// Brings the schema up to `target` (default: the newest known). All pending steps run in one
// IMMEDIATE transaction, so a failure leaves the previous version whole and two processes
// opening the same file at once cannot both migrate.
export function migrate(db: Db, migrations: readonly Migration[] = MIGRATIONS, target?: number): number {
  const known = latestVersion(migrations)
  const place = { path: db.name }
  refuseNewer(db, schemaVersion(db), known, place, REMEDY)
  const run = db.transaction(() => {
    const current = schemaVersion(db)
    refuseNewer(db, current, known, place, REMEDY)
    applyPending(db, migrations, current, target ?? known, place, (v) => db.pragma(`user_version = ${v}`))
    return schemaVersion(db)
  })
  return run.immediate()
}
