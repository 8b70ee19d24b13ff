import { openHome, pauseBeforeMakingHome } from '../util/home-guard.js'
import { AttachmentsRepo } from './attachments.js'
import { BlobStore } from './blob-store.js'
import { BlocksRepo } from './blocks.js'
import { type Durability, databasePath, openDatabase } from './database.js'
import { DefsRepo } from './defs.js'
import { EventsRepo } from './events.js'
import { GroupCommit } from './group-commit.js'
import { IdempotencyRepo } from './idempotency.js'
import { ExtensionKvRepo } from './kv.js'
import { LeasesRepo } from './leases.js'
import type { Migration } from './migrations.js'
import { databaseUrlOf, openPostgres, postgresIntegrity } from './postgres/open.js'
import { SessionsRepo } from './sessions.js'
import {
  type Db,
  type Dialect,
  type NestedMode,
  type RepoContext,
  type SqliteDb,
  Statements,
} from './statements.js'
import { TurnsRepo } from './turns.js'

export type StoreOptions = {
  // The vis home; defaults to visHome() (VIS_HOME or ~/.vis). The database is <home>/vis.db.
  home?: string
  // postgres://... or postgresql://... selects PostgreSQL instead of <home>/vis.db; defaults to
  // VIS_DATABASE_URL. Empty means SQLite.
  databaseUrl?: string
  // PostgreSQL: how long one query may wait for the server before the connection counts as lost.
  queryTimeoutMs?: number
  durability?: Durability
  busyTimeoutMs?: number
  // Non-image attachments larger than this go to the file store instead of a BLOB. On PostgreSQL
  // every attachment stays inline (bytea): the file store is per home, a cluster shares only the database.
  inlineFloorBytes?: number
  // Events kept per session for SSE replay (at least this many; up to 1/8 more between trims).
  eventRetention?: number
  // For tests of the migration machinery.
  migrations?: readonly Migration[]
  // The clock stamped on rows (ms since the epoch); tests pass a deterministic one.
  now?: () => number
}

export const DEFAULT_INLINE_FLOOR_BYTES = 64 * 1024
export const DEFAULT_EVENT_RETENTION = 10_000

// One open database and the repositories over it. Open one per process and share it:
// better-sqlite3 is synchronous, so one connection serialises this process's writes. On
// PostgreSQL the one connection is synchronous too (postgres/sync-client.ts).
export class Store {
  readonly home: string
  // The SQLite file, or the PostgreSQL URL without its password.
  readonly path: string
  readonly db: Db
  readonly dialect: Dialect
  readonly blobs: BlobStore
  readonly sessions: SessionsRepo
  readonly defs: DefsRepo
  readonly turns: TurnsRepo
  readonly blocks: BlocksRepo
  readonly attachments: AttachmentsRepo
  readonly events: EventsRepo
  readonly idempotency: IdempotencyRepo
  readonly kv: ExtensionKvRepo
  readonly leases: LeasesRepo
  readonly durability: Durability
  // The clock stamped on rows (StoreOptions.now).
  readonly now: () => number
  // Set on SQLite only: the same object as db, with better-sqlite3's full API (pragmas).
  readonly sqlite: SqliteDb | undefined
  private readonly group: GroupCommit | undefined
  private readonly sql: Statements

  constructor(options: StoreOptions = {}) {
    // Registered (every jail masks it from now on, not only those of the processes that run it),
    // and refused while a running jail could write it (home-guard.ts), before anything is made there.
    this.home = openHome(options.home, 'store.open')
    this.durability = options.durability ?? 'full'
    const url = databaseUrlOf(options.databaseUrl)
    let inlineFloor = options.inlineFloorBytes ?? DEFAULT_INLINE_FLOOR_BYTES
    if (url === undefined) {
      this.dialect = 'sqlite'
      this.path = databasePath(this.home)
      pauseBeforeMakingHome()
      this.sqlite = openDatabase(this.path, options)
      try {
        // Again now that the folder exists: a jail that started meanwhile found nothing to mask.
        openHome(this.home, 'store.open')
      } catch (err) {
        this.sqlite.close()
        throw err
      }
      this.db = this.sqlite
      this.group = new GroupCommit(`${this.path}-wal`)
    } else {
      this.dialect = 'postgres'
      this.sqlite = undefined
      this.group = undefined
      this.db = openPostgres(url, options)
      this.path = this.db.name
      inlineFloor = Number.POSITIVE_INFINITY
    }
    this.now = options.now ?? Date.now
    this.sql = new Statements(this.db)
    const ctx: RepoContext = {
      db: this.db,
      dialect: this.dialect,
      sql: this.sql,
      now: this.now,
    }
    this.blobs = new BlobStore(this.home)
    this.sessions = new SessionsRepo(ctx)
    this.defs = new DefsRepo(ctx)
    this.turns = new TurnsRepo(ctx)
    this.attachments = new AttachmentsRepo(ctx, this.blobs, inlineFloor)
    this.idempotency = new IdempotencyRepo(ctx)
    this.blocks = new BlocksRepo(ctx, this.attachments, this.idempotency)
    this.events = new EventsRepo(ctx, options.eventRetention ?? DEFAULT_EVENT_RETENTION)
    this.kv = new ExtensionKvRepo(ctx)
    this.leases = new LeasesRepo(ctx)
  }

  // Runs fn in one write transaction (nested calls become savepoints). `nested: 'atomic'`:
  // fn promises that nothing in it catches a nested transaction's failure and goes on, so
  // those run without savepoints (Statements.tx). `recoverable`: the caller catches fn's
  // failure and goes on, so fn is a real savepoint even when the enclosing body is atomic.
  transaction<T>(fn: () => T, options: { nested?: NestedMode; recoverable?: boolean } = {}): T {
    return options.recoverable
      ? this.sql.recoverable(fn, 'immediate', options.nested)
      : this.sql.tx(fn, 'immediate', options.nested)
  }

  // Inside a transaction whose body promised 'atomic' (Statements.atomic).
  get inAtomicTransaction(): boolean {
    return this.sql.atomic
  }

  // Runs fn with nested transactions as savepoints again (Statements.withSavepoints).
  withSavepoints<T>(fn: () => T): T {
    return this.sql.withSavepoints(fn)
  }

  // Runs fn (writes) without waiting for the disk: committed, so a killed process loses
  // nothing, but not yet fsynced. Whoever acknowledges it awaits synced() first. Inside an
  // outer transaction the outer one decides.
  // On PostgreSQL a commit is durable when it returns (synchronous_commit on): nothing to defer.
  lazily<T>(fn: () => T): T {
    if (this.sqlite === undefined || this.durability !== 'full' || this.db.inTransaction) return fn()
    // exec, not pragma(): 5x cheaper per switch. Not a prepared statement either: SQLite applies
    // `PRAGMA synchronous = X` when it compiles the statement, so re-running one does nothing.
    this.db.exec('PRAGMA synchronous = NORMAL')
    try {
      return fn()
    } finally {
      this.db.exec('PRAGMA synchronous = FULL')
    }
  }

  // Resolves once every commit made so far is on disk (one shared fsync of the WAL).
  synced(): Promise<void> {
    if (this.group === undefined || this.durability !== 'full' || !this.db.open) return Promise.resolve()
    return this.group.sync()
  }

  // SQLite's own consistency check: ['ok'] or the problems it found. PostgreSQL enforces its
  // constraints itself; there a cheap check of what no constraint covers (postgres/open.ts).
  integrityCheck(): string[] {
    if (this.sqlite === undefined) return postgresIntegrity(this.db)
    return (this.sqlite.pragma('integrity_check') as { integrity_check: string }[]).map(
      (r) => r.integrity_check,
    )
  }

  close(): void {
    if (!this.db.open) return
    if (this.sqlite === undefined) {
      this.db.close()
      return
    }
    this.group?.close()
    try {
      // Folds the WAL back into vis.db so a closed home is one self-contained file. If a reader in
      // another process blocks it, nothing is lost: the WAL stays and is replayed on the next open.
      this.sqlite.pragma('wal_checkpoint(TRUNCATE)')
    } finally {
      this.db.close()
    }
  }
}

export function openStore(options: StoreOptions = {}): Store {
  return new Store(options)
}
