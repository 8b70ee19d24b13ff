import type Database from 'better-sqlite3'

export type Db = Database.Database
export type Statement = Database.Statement<unknown[], unknown>

// Prepared once per connection and reused: preparing is most of the cost of a small query.
export class Statements {
  private readonly rows = new Map<string, Statement>()
  private readonly values = new Map<string, Statement>()

  constructor(readonly db: Db) {}

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
  readonly sql: Statements
  readonly now: () => number
}
