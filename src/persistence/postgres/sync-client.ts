// A synchronous PostgreSQL connection for the main thread. The engine calls its repositories
// synchronously (they were written for better-sqlite3), so a query must return a value, not a
// promise. A worker thread owns the real, asynchronous pg Client; this side posts a request,
// blocks in Atomics.wait on a shared flag until the worker has posted the reply, and takes it
// with receiveMessageOnPort — the event loop never runs in between, exactly like a call into
// better-sqlite3.
import { MessageChannel, type MessagePort, type Transferable, type Worker } from 'node:worker_threads'
import { VisError } from '../../util/errors.js'
import { startModuleWorker } from '../../util/module-worker.js'
import type { NumberedRequest, PgFailure, Reply, Request, WorkerData } from './protocol.js'
import { nextSeq, waitForReply } from './reply-wait.js'

export type SyncClientOptions = {
  // How long one query may take before the connection is declared lost. A wait this long is a
  // dead server or network, not a slow query: the engine's own statements are all point queries.
  timeoutMs?: number
  // How long the first request may take: the worker's start (module loading) and the connection.
  connectTimeoutMs?: number
}

export const DEFAULT_QUERY_TIMEOUT_MS = 30_000
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000

// The worker beside this file (src/util/module-worker.ts says how it starts from source).
function startWorker(data: WorkerData, transferList: Transferable[]): Worker {
  return startModuleWorker(import.meta.url, 'worker', { workerData: data, transferList })
}

// What a connection URL may show in an error: no password.
export function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return '(unparseable database URL)'
  }
}

export class SyncPgClient {
  private readonly worker: Worker
  private readonly port: MessagePort
  private readonly signal: Int32Array
  private readonly timeoutMs: number
  private readonly connectTimeoutMs: number
  private connected = false
  private broken: PgFailure | undefined
  private closed = false
  // The number of the request in flight (or the last one); the worker echoes it in its reply.
  private seq = 0
  // Round trips made so far (the benchmark reports them per block).
  requests = 0

  constructor(
    readonly url: string,
    options: SyncClientOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS
    const shared = new SharedArrayBuffer(4)
    this.signal = new Int32Array(shared)
    const { port1, port2 } = new MessageChannel()
    this.port = port1
    const data: WorkerData = {
      connectTimeoutMs: this.connectTimeoutMs,
      url,
      port: port2,
      signal: shared,
      applicationName: `vis-runtime pid ${process.pid}`,
    }
    this.worker = startWorker(data, [port2])
    // Neither keeps the process alive: a host that forgets close() still exits.
    this.worker.unref()
    this.port.unref()
  }

  get isClosed(): boolean {
    return this.closed
  }

  // Sends one request and blocks until its reply. Throws the failure as reported by the worker,
  // or db.connection-lost when no reply came within the timeout.
  request(req: Request): Reply & { ok: true } {
    if (this.closed) throw new VisError('db.closed', 'The PostgreSQL connection is closed.', { op: req.op })
    if (this.broken) throw this.lostError(this.broken, req)
    this.requests++
    this.seq = nextSeq(this.seq)
    const numbered: NumberedRequest = { seq: this.seq, req }
    this.port.postMessage(numbered)
    // Until the first reply the worker may still be loading and connecting: a slow start on a busy
    // machine is not a dead server. pg gives up connecting after connectTimeoutMs with its own
    // error; the margin lets that error, not this wait, be what the caller sees.
    const limit = this.connected ? this.timeoutMs : Math.max(this.timeoutMs, this.connectTimeoutMs + 5_000)
    const got = waitForReply<Reply>(this.port, this.signal, this.seq, limit)
    if (!('reply' in got)) {
      this.broken = { message: `no answer from PostgreSQL within ${limit} ms`, lost: true }
      // The worker may still be stuck on the dead socket: it can never answer in order again.
      void this.worker.terminate()
      throw this.lostError(this.broken, req)
    }
    const reply = got.reply
    this.connected = true
    if (reply.ok) return reply
    if (reply.error.lost) {
      this.broken = reply.error
      throw this.lostError(reply.error, req)
    }
    throw queryError(reply.error, req)
  }

  close(): void {
    if (this.closed) return
    try {
      if (!this.broken) this.request({ op: 'close' })
    } catch {
      // Closing a connection that is already gone is not an error.
    } finally {
      this.closed = true
      this.port.close()
      void this.worker.terminate()
    }
  }

  private lostError(f: PgFailure, req: Request): VisError {
    return new VisError(
      'db.connection-lost',
      `Lost the connection to PostgreSQL at ${redactUrl(this.url)}: ${f.message}. Check that the server is running and reachable, then restart this node.`,
      { url: redactUrl(this.url), op: req.op, ...(f.pgCode ? { pgCode: f.pgCode } : {}) },
    )
  }
}

export function firstLine(sql: string): string {
  return sql.trim().split('\n', 1)[0]!.trim()
}

// db.query-failed with the statement's first line and PostgreSQL's SQLSTATE, so callers (and
// constraint.ts) can tell a unique violation (23505) from a foreign key (23503) or a CHECK (23514).
function queryError(f: PgFailure, req: Request): VisError {
  const sql = req.op === 'close' ? 'close' : firstLine(req.sql)
  return new VisError(
    'db.query-failed',
    `PostgreSQL refused \`${sql}\`: ${f.message} (SQLSTATE ${f.pgCode ?? '?'})`,
    {
      op: 'query',
      sql,
      pgCode: f.pgCode,
      ...(f.constraint ? { constraint: f.constraint } : {}),
      ...(f.detail ? { detail: f.detail } : {}),
    },
  )
}
