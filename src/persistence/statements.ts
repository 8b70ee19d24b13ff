import type Database from 'better-sqlite3'

// The better-sqlite3 subset the repositories use. On SQLite the Db IS the better-sqlite3
// Database (structural typing: no wrapper on the hot path); on PostgreSQL it is a PgDatabase
// (postgres/database.ts) that blocks on a worker thread, so the same synchronous repository code
// runs on both. `dialect` is present only on PostgreSQL: read it through dialectOf().
export type RunResult = { changes: number }

export interface Statement {
  run(...params: unknown[]): RunResult
  get(...params: unknown[]): unknown
  all(...params: unknown[]): unknown[]
  pluck(toggle?: boolean): this
}

export type Transaction<A extends unknown[], R> = ((...args: A) => R) & {
  deferred(...args: A): R
  immediate(...args: A): R
  exclusive(...args: A): R
}

export interface Db {
  prepare(sql: string): Statement
  // The returned function runs fn in a transaction; nested calls become savepoints.
  transaction<A extends unknown[], R>(fn: (...args: A) => R): Transaction<A, R>
  exec(sql: string): unknown
  readonly inTransaction: boolean
  readonly open: boolean
  // The file (SQLite) or the URL without its password (PostgreSQL), for messages.
  readonly name: string
  close(): unknown
  readonly dialect?: 'postgres'
}

export type SqliteDb = Database.Database
export type Dialect = 'sqlite' | 'postgres'

export function dialectOf(db: Db): Dialect {
  return db.dialect ?? 'sqlite'
}

// Prepared once per connection and reused: preparing is most of the cost of a small query.
export class Statements {
  private readonly rows = new Map<string, Statement>()
  private readonly values = new Map<string, Statement>()
  // One transaction wrapper for every caller: better-sqlite3 builds four wrapper functions and
  // defines their properties on each db.transaction(fn), which cost more than the statements
  // of a small transaction; this one takes the body as its argument instead.
  private runner: Transaction<[() => unknown], unknown> | undefined

  constructor(readonly db: Db) {}

  // Runs fn in a transaction (a savepoint when nested), like db.transaction(fn)() /
  // .immediate(): commits when fn returns, rolls back when it throws.
  tx<T>(fn: () => T, mode: 'default' | 'immediate' = 'default'): T {
    this.runner ??= this.db.transaction((body: () => unknown) => body())
    return (mode === 'immediate' ? this.runner.immediate(fn) : this.runner(fn)) as T
  }

  // Returns rows as objects.
  get(sql: string): Statement {
    return this.cached(this.rows, sql, false)
  }

  // Returns the first column's value. Kept in its own cache because pluck mode sticks to a statement.
  pluck(sql: string): Statement {
    return this.cached(this.values, sql, true)
  }

  private cached(cache: Map<string, Statement>, sql: string, pluck: boolean): Statement {
    let stmt = cache.get(sql)
    if (!stmt) {
      stmt = this.db.prepare(sql)
      if (pluck) stmt.pluck()
      cache.set(sql, stmt)
    }
    return stmt
  }
}

// What every repository needs: the connection, its statement cache and the clock.
export type RepoContext = {
  readonly db: Db
  // Where a statement must differ between the backends (few places; see dialectOf()).
  readonly dialect: Dialect
  readonly sql: Statements
  readonly now: () => number
}
