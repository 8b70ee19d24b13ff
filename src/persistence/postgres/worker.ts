// Runs in a worker_threads Worker: owns one pg Client and answers the main thread's requests in
// order. Each reply echoes its request's number; after posting it the worker stores that number
// in the shared slot and wakes the main thread, which is blocked in Atomics.wait (reply-wait.ts)
// and takes the reply with receiveMessageOnPort.
import { workerData } from 'node:worker_threads'
import pg from 'pg'
import type { NumberedRequest, PgFailure, Reply, WorkerData } from './protocol.js'
import { postReply } from './reply-wait.js'

const data = workerData as WorkerData
const signal = new Int32Array(data.signal)
const port = data.port

// BIGINT holds ms timestamps and counters (count(*) is BIGINT too): all far below 2^53, so a
// number is exact and is what the repositories' schemas expect. NUMERIC likewise for sums.
const INT8 = 20
const NUMERIC = 1700
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8 || oid === NUMERIC) return (v: string) => Number(v)
    return pg.types.getTypeParser(oid, format)
  },
}

let lost: PgFailure | undefined
const client = new pg.Client({
  connectionString: data.url,
  types,
  application_name: data.applicationName,
  connectionTimeoutMillis: data.connectTimeoutMs,
})
// A dropped connection is reported on the client, not only by the query in flight: remember it
// so every later request fails at once instead of waiting on a socket that is gone.
client.on('error', (err) => {
  lost = { message: err.message, lost: true }
})
client.on('end', () => {
  lost ??= { message: 'the connection to PostgreSQL was closed', lost: true }
})

function failure(err: unknown): PgFailure {
  const e = err as { message?: string; code?: string; constraint?: string; detail?: string }
  const f: PgFailure = { message: e.message ?? String(err) }
  if (typeof e.code === 'string') f.pgCode = e.code
  if (typeof e.constraint === 'string') f.constraint = e.constraint
  if (typeof e.detail === 'string') f.detail = e.detail
  // The server ended this session (57P01 admin shutdown, 57P02 crash, class 08 connection
  // exceptions) or the socket died (no SQLSTATE at all): nothing more can run on this client.
  const gone =
    lost !== undefined ||
    /^(08|57P0)/.test(e.code ?? '') ||
    (e.code === undefined && /Connection terminated|ECONNRESET|EPIPE|not queryable/i.test(f.message))
  if (gone) {
    f.lost = true
    lost ??= f
  }
  return f
}

// Structured clone turns a Buffer into a plain Uint8Array; pg sends only Buffers as bytea.
// PostgreSQL's text cannot hold NUL (SQLite's can): a block that printed one would fail to store
// at all, so NUL becomes U+FFFD, the replacement character, rather than losing the block.
function param(v: unknown): unknown {
  if (typeof v === 'string') return v.includes('\0') ? v.replaceAll('\0', '\uFFFD') : v
  return v instanceof Uint8Array && !Buffer.isBuffer(v)
    ? Buffer.from(v.buffer, v.byteOffset, v.byteLength)
    : v
}

const connected = client.connect().then(
  () => undefined,
  (err: unknown) => failure(err),
)

// Requests arrive strictly one at a time (the main thread blocks until each reply), so the
// handler needs no queue of its own.
port.on('message', async ({ seq, req }: NumberedRequest) => {
  const reply = (r: Reply) => postReply(port, signal, seq, r)
  const openFailed = await connected
  if (openFailed) return reply({ ok: false, error: { ...openFailed, lost: true } })
  if (req.op === 'close') {
    await client.end().catch(() => undefined)
    reply({ ok: true, rows: [], rowCount: 0 })
    port.close()
    return
  }
  if (lost) return reply({ ok: false, error: lost })
  try {
    if (req.prefix !== undefined) await client.query(req.prefix)
    if (req.op === 'exec') {
      await client.query(req.sql)
      return reply({ ok: true, rows: [], rowCount: 0 })
    }
    const config: pg.QueryConfig & { rowMode?: 'array' } = { text: req.sql, values: req.params.map(param) }
    if (req.name !== undefined) config.name = req.name
    if (req.rowMode) config.rowMode = req.rowMode
    const r = await client.query(config)
    reply({ ok: true, rows: r.rows, rowCount: r.rowCount ?? 0 })
  } catch (err) {
    reply({ ok: false, error: failure(err) })
  }
})
