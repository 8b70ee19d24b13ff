import type { MessagePort } from 'node:worker_threads'

// The messages between the main thread (sync-client.ts) and the worker that owns the pg
// connection (worker.ts). Both ends are this module's own code in one process, passed by
// structured clone, so they are plain types: a zod parse per query would cost more than the
// query's own bookkeeping. Whatever crosses the real boundary (the SQL's parameters, the rows)
// is validated by the repositories' schemas as on SQLite.

export type Request =
  // One statement on the extended protocol; `name` makes pg prepare it once per connection.
  // `prefix`: statements run first on the simple protocol (a deferred BEGIN or SAVEPOINT).
  | { op: 'query'; sql: string; name?: string; params: unknown[]; rowMode?: 'array'; prefix?: string }
  // One or several statements on the simple protocol, no parameters (DDL, BEGIN, SAVEPOINT...).
  | { op: 'exec'; sql: string; prefix?: string }
  | { op: 'close' }

export type PgFailure = {
  message: string
  // PostgreSQL's SQLSTATE (23505 unique violation, 23503 foreign key, 40P01 deadlock...).
  pgCode?: string
  constraint?: string
  detail?: string
  // True when the connection itself is gone: every later query fails the same way.
  lost?: boolean
}

export type Reply = { ok: true; rows: unknown[]; rowCount: number } | { ok: false; error: PgFailure }

// On the port, each request carries its number; the worker's reply echoes it (reply-wait.ts).
export type NumberedRequest = { seq: number; req: Request }

export type WorkerData = {
  url: string
  port: MessagePort
  // Int32 slot 0: the sequence number of the last reply posted (reply-wait.ts).
  signal: SharedArrayBuffer
  applicationName: string
  // pg's own connect timeout, so an unreachable host fails with its error rather than a wait.
  connectTimeoutMs: number
}
