// PostgreSQL's schema: the same versions, tables and indexes as SQLite's, compiled from the one
// definition (../schema/tables.ts; the dialect's differences are in ../schema/ddl.ts), and how
// they are applied here: a schema_version row and an advisory lock instead of user_version.
import { applyPending, latestVersion, refuseNewer } from '../schema/apply.js'
import { compileMigrations } from '../schema/ddl.js'
import type { Migration } from '../schema/define.js'
import type { Db } from '../statements.js'

export const PG_MIGRATIONS: readonly Migration[] = compileMigrations('postgres')

// Any constant shared by every vis node: the key of the advisory lock that serialises migrations.
const MIGRATION_LOCK = 0x7669_7331 // "vis1"

export function pgSchemaVersion(db: Db): number {
  const exists = db.prepare("SELECT to_regclass('schema_version') IS NOT NULL").pluck().get() as boolean
  if (!exists) return 0
  return (db.prepare('SELECT version FROM schema_version').pluck().get() as number | undefined) ?? 0
}

const REMEDY = 'Upgrade vis-runtime (every node of a cluster), or point VIS_DATABASE_URL at another database.'

// Brings the schema up to the newest known version. All pending steps run in one transaction
// under a transaction-scoped advisory lock, so several nodes starting together migrate once:
// the others wait for the lock, then find the work done. A failure leaves the previous version.
export function migratePostgres(db: Db, migrations: readonly Migration[] = PG_MIGRATIONS): number {
  const known = latestVersion(migrations)
  const place = { url: db.name }
  return db.transaction(() => {
    db.prepare('SELECT pg_advisory_xact_lock(?)').run(MIGRATION_LOCK)
    db.exec(`CREATE TABLE IF NOT EXISTS schema_version (
               one BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
               version INTEGER NOT NULL)`)
    db.exec('INSERT INTO schema_version (version) VALUES (0) ON CONFLICT DO NOTHING')
    const current = pgSchemaVersion(db)
    refuseNewer(db, current, known, place, REMEDY)
    applyPending(db, migrations, current, known, place, (v) =>
      db.prepare('UPDATE schema_version SET version = ?').run(v),
    )
    return pgSchemaVersion(db)
  })()
}
