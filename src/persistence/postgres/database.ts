// The better-sqlite3 subset the repositories use (statements.ts `Db`), over a synchronous
// PostgreSQL connection, so the same repository code runs on both backends.
import type { Db, RunResult, Statement, Transaction } from '../statements.js'
import type { Request } from './protocol.js'
import { redactUrl, type SyncClientOptions, SyncPgClient } from './sync-client.js'
import { toPostgresPlaceholders } from './translate.js'

// bytea arrives from the worker as a plain Uint8Array (structured clone drops Buffer's class);
// the repositories expect Buffers as from better-sqlite3.
function buffers(row: unknown): unknown {
  if (row instanceof Uint8Array) return Buffer.isBuffer(row) ? row : asBuffer(row)
  if (row === null || typeof row !== 'object') return row
  const r = row as Record<string, unknown>
  for (const k in r) {
    const v = r[k]
    if (v instanceof Uint8Array && !Buffer.isBuffer(v)) r[k] = asBuffer(v)
  }
  return r
}

function asBuffer(v: Uint8Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength)
}

class PgStatement implements Statement {
  private plucking = false

  constructor(
    private readonly db: PgDatabase,
    readonly source: string,
    private readonly text: string,
    private readonly name: string,
  ) {}

  pluck(on = true): this {
    this.plucking = on
    return this
  }

  run(...params: unknown[]): RunResult {
    return { changes: this.db.send(this.query(params)).rowCount }
  }

  get(...params: unknown[]): unknown {
    const row = this.db.send(this.query(params)).rows[0]
    if (row === undefined) return undefined
    return this.plucking ? buffers((row as unknown[])[0]) : buffers(row)
  }

  all(...params: unknown[]): unknown[] {
    const rows = this.db.send(this.query(params)).rows
    return this.plucking ? rows.map((r) => buffers((r as unknown[])[0])) : rows.map(buffers)
  }

  private query(params: unknown[]) {
    return {
      op: 'query' as const,
      sql: this.text,
      name: this.name,
      params,
      ...(this.plucking ? { rowMode: 'array' as const } : {}),
    }
  }
}

export class PgDatabase implements Db {
  readonly dialect = 'postgres' as const
  readonly name: string
  readonly client: SyncPgClient
  private depth = 0
  // BEGIN / SAVEPOINT not sent yet: they ride along with the transaction's first statement (one
  // round trip fewer per transaction), and a transaction that ran nothing sends nothing at all.
  private readonly deferred: string[] = []
  // One server-side prepared statement per distinct SQL text, named once per connection.
  private readonly names = new Map<string, string>()

  constructor(url: string, options: SyncClientOptions = {}) {
    this.name = redactUrl(url)
    this.client = new SyncPgClient(url, options)
  }

  get open(): boolean {
    return !this.client.isClosed
  }

  get inTransaction(): boolean {
    return this.depth > 0
  }

  prepare(sql: string): Statement {
    const text = toPostgresPlaceholders(sql)
    let name = this.names.get(text)
    if (name === undefined) {
      name = `vis_${this.names.size + 1}`
      this.names.set(text, name)
    }
    return new PgStatement(this, sql, text, name)
  }

  exec(sql: string): this {
    this.send({ op: 'exec', sql })
    return this
  }

  // Every request goes out here, carrying whatever transaction opening is still deferred.
  send(req: Extract<Request, { op: 'query' | 'exec' }>) {
    if (this.deferred.length === 0) return this.client.request(req)
    const prefix = this.deferred.join('; ')
    this.deferred.length = 0
    return this.client.request({ ...req, prefix })
  }

  // better-sqlite3's contract: the returned function runs fn in a transaction (a savepoint when
  // nested), commits when fn returns and rolls back when it throws. PostgreSQL has no deferred /
  // immediate distinction worth keeping: writers are serialised by row locks.
  transaction<A extends unknown[], R>(fn: (...args: A) => R): Transaction<A, R> {
    const run = (...args: A): R => this.inTx(() => fn(...args))
    return Object.assign(run, { deferred: run, immediate: run, exclusive: run })
  }

  close(): void {
    this.client.close()
  }

  private inTx<R>(fn: () => R): R {
    const level = this.depth
    const savepoint = `vis_sp_${level}`
    const mark = this.deferred.length
    this.deferred.push(level === 0 ? 'BEGIN' : `SAVEPOINT ${savepoint}`)
    this.depth++
    // True while this level's opening has not reached the server: then closing it is a no-op.
    const unsent = () => this.deferred.length > mark
    let result: R
    try {
      result = fn()
    } catch (err) {
      this.depth = level
      if (unsent()) {
        this.deferred.length = mark
        throw err
      }
      try {
        this.exec(
          level === 0 ? 'ROLLBACK' : `ROLLBACK TO SAVEPOINT ${savepoint}; RELEASE SAVEPOINT ${savepoint}`,
        )
      } catch {
        // The connection is gone (the rollback happens server-side) or already aborted: the
        // original error is the one to report.
      }
      throw err
    }
    this.depth = level
    if (unsent()) this.deferred.length = mark
    else this.exec(level === 0 ? 'COMMIT' : `RELEASE SAVEPOINT ${savepoint}`)
    return result
  }
}
