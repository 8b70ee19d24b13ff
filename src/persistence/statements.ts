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

// How a transaction body treats the transactions nested in it (Statements.tx).
// 'savepoint': each nested transaction is a savepoint, so a caller that catches a nested
// failure and goes on keeps everything else (what db.transaction does).
// 'atomic': the body promises that NO code in it catches a nested transaction's failure and
// goes on: every such failure aborts this whole transaction anyway, so a savepoint buys
// nothing and nested transactions run flat in it. The promise is checked: a nested failure
// that was caught inside still rolls this transaction back (and throws that failure), so a
// broken promise can never commit half of a nested transaction.
export type NestedMode = 'savepoint' | 'atomic'

// Prepared once per connection and reused: preparing is most of the cost of a small query.
export class Statements {
  private readonly rows = new Map<string, Statement>()
  private readonly values = new Map<string, Statement>()
  // One transaction wrapper for every caller: better-sqlite3 builds four wrapper functions and
  // defines their properties on each db.transaction(fn), which cost more than the statements
  // of a small transaction; this one takes the body as its argument instead.
  private runner: Transaction<[() => unknown], unknown> | undefined
  // The innermost open transaction or savepoint opened here: does its body run nested
  // transactions flat, and did one of those fail (its error) while the body went on?
  private flat = false
  private failed: { error: unknown } | undefined

  constructor(readonly db: Db) {}

  // Runs fn in a transaction, like db.transaction(fn)() / .immediate(): commits when fn returns,
  // rolls back when it throws. Nested in another transaction it is a savepoint, unless the
  // enclosing body is 'atomic' (then it runs flat; see NestedMode). `nested` is the promise
  // fn's own body makes about the transactions nested in IT.
  tx<T>(fn: () => T, mode: 'default' | 'immediate' = 'default', nested: NestedMode = 'savepoint'): T {
    if (!this.flat || !this.db.inTransaction) return this.open(fn, mode, nested)
    try {
      return this.scope(fn, nested === 'atomic')
    } catch (error) {
      // Nothing undoes what fn wrote but the enclosing transaction's rollback: note the failure,
      // so the enclosing transaction cannot commit even if someone catches it on the way out.
      this.failed ??= { error }
      throw error
    }
  }

  // True inside a transaction whose body promised 'atomic': a nested failure aborts it anyway.
  get atomic(): boolean {
    return this.flat && this.db.inTransaction
  }

  // Like tx(), for a caller that catches fn's failure and goes on: always a real savepoint
  // when nested (even in an atomic body), so a failure leaves nothing of fn behind.
  recoverable<T>(
    fn: () => T,
    mode: 'default' | 'immediate' = 'default',
    nested: NestedMode = 'savepoint',
  ): T {
    return this.open(fn, mode, nested)
  }

  // Runs fn (code the enclosing body does not control: event listeners) with nested
  // transactions as savepoints again, whatever the enclosing body promised. Costs no statement.
  withSavepoints<T>(fn: () => T): T {
    return this.scope(fn, false)
  }

  private open<T>(fn: () => T, mode: 'default' | 'immediate', nested: NestedMode): T {
    this.runner ??= this.db.transaction((body: () => unknown) => body())
    const outer = this.failed
    this.failed = undefined
    const body = () => {
      const out = this.scope(fn, nested === 'atomic')
      // A flat nested transaction failed and its failure was swallowed: roll back with it.
      if (this.failed !== undefined) throw this.failed.error
      return out
    }
    try {
      return (mode === 'immediate' ? this.runner.immediate(body) : this.runner(body)) as T
    } finally {
      this.failed = outer
    }
  }

  // Runs fn with nested transactions flat (atomic) or as savepoints, then restores the mode.
  private scope<T>(fn: () => T, atomic: boolean): T {
    const outer = this.flat
    this.flat = atomic
    try {
      return fn()
    } finally {
      this.flat = outer
    }
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
