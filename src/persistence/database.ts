import { mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import Database from 'better-sqlite3'
import { VisError } from '../util/errors.js'
import { visHome } from '../util/home.js'
import { MIGRATIONS, type Migration, migrate } from './migrations.js'
import type { SqliteDb as Db } from './statements.js'

export const DB_FILE = 'vis.db'

export function databasePath(home?: string): string {
  return join(visHome(home), DB_FILE)
}

// Durability: in WAL mode every commit is appended to the WAL before better-sqlite3 returns,
// so a killed process (SIGKILL, crash) never loses a committed transaction, whatever
// `synchronous` says. `synchronous` decides what survives power loss or a kernel panic:
// NORMAL may roll back the last commits, FULL fsyncs the WAL on every commit and keeps them.
// We promise "nothing acknowledged is lost", so FULL is the default; `normal` is an opt-in
// for throwaway homes (benchmarks) where an fsync per commit is the dominant cost.
export type Durability = 'full' | 'normal'

export type OpenDatabaseOptions = {
  durability?: Durability
  busyTimeoutMs?: number
  migrations?: readonly Migration[]
}

// better-sqlite3 gets its native binary from its install script; a package manager that skips
// install scripts (npm --ignore-scripts, pnpm's default) leaves none, and its own error is a list
// of a dozen paths. Said as what happened and what to run.
function driverMissing(file: string, err: unknown): VisError {
  return new VisError(
    'db.driver-missing',
    `Cannot open the database ${file}: better-sqlite3 (SQLite's driver) has no native binary, as its install ` +
      'script did not run (npm install --ignore-scripts, or a package manager that skips install scripts). ' +
      'Run `npm rebuild better-sqlite3` in your project (it downloads its prebuilt binary, or compiles it), then try again.',
    { path: file },
    { cause: err },
  )
}

export function openDatabase(file: string, options: OpenDatabaseOptions = {}): Db {
  mkdirSync(dirname(file), { recursive: true })
  let db: Db
  try {
    db = new Database(file)
  } catch (err) {
    if (/Could not locate the bindings file/.test((err as Error).message)) throw driverMissing(file, err)
    throw new VisError(
      'db.open-failed',
      `Cannot open the database ${file}: ${(err as Error).message}`,
      { path: file },
      { cause: err },
    )
  }
  try {
    // Waiting briefly beats failing at once when another process (the CLI beside `vis serve`) writes.
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`)
    const mode = db.pragma('journal_mode = WAL', { simple: true })
    if (mode !== 'wal') {
      throw new VisError(
        'db.wal-unavailable',
        `The database ${file} cannot use write-ahead logging (journal mode is ${String(mode)}). Put the vis home on a local filesystem.`,
        { path: file },
      )
    }
    db.pragma(`synchronous = ${options.durability === 'normal' ? 'NORMAL' : 'FULL'}`)
    db.pragma('foreign_keys = ON')
    migrate(db, options.migrations ?? MIGRATIONS)
    return db
  } catch (err) {
    db.close()
    if (err instanceof VisError) throw err
    throw new VisError(
      'db.open-failed',
      `Cannot open the database ${file}: ${(err as Error).message}`,
      { path: file },
      { cause: err },
    )
  }
}
