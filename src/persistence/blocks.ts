import { z } from 'zod'
import { VisError } from '../util/errors.js'
import type { AttachmentInput, AttachmentsRepo } from './attachments.js'
import { constraintViolation } from './constraint.js'
import { commonBlockError, commonFinishBlockInput, commonStartBlockInput, isBlockRow } from './fast-shapes.js'
import { IdempotencyKeySchema, type IdempotencyRepo } from './idempotency.js'
import { newId } from './ids.js'
import { decodeJson, decodeNullableJson, encodeJson, JsonValueSchema, parseInput } from './json.js'
import { jsonBytes } from './json-bytes.js'
import type { RepoContext } from './statements.js'

export const BlockStatusSchema = z.enum(['running', 'done'])
export type BlockStatus = z.infer<typeof BlockStatusSchema>

// What the guest reports when a block fails; extra fields (traceback, key path...) are kept.
export const BlockErrorSchema = z
  .object({
    code: z.string().optional(),
    message: z.string(),
    traceback: z.string().optional(),
  })
  .catchall(JsonValueSchema)
export type BlockError = z.infer<typeof BlockErrorSchema>

// What a session view shows for an error too long for it (listSummaries).
const CUT_ERROR = encodeJson({
  message: 'The error is too long for the session view: GET the block for all of it.',
})

// How many cut rows listSummaries reads at a time: it stops reading once the page is full in
// bytes, so a read past the bound is at most this many blocks at the field bound.
const SUMMARY_CHUNK = 8

// What a summary row's fields weigh in the answer (json-bytes.ts): its texts as JSON strings
// (a result, value or error is stored as JSON text: its JSON as a string is no smaller than
// itself re-encoded), the code twice with its display, and the ids, times and names around them,
// and the block's attachments as the page lists them (ATTACHMENT_BYTES).
const SUMMARY_ROW_BYTES = 1024
function summaryBytes(row: Record<string, unknown>, display: boolean): number {
  const text = (v: unknown) => (typeof v === 'string' ? jsonBytes(v) : 0)
  const code = text(row.code)
  return (
    SUMMARY_ROW_BYTES +
    (display ? 2 * code : code) +
    text(row.stdout) +
    text(row.result) +
    text(row.value) +
    text(row.error) +
    Number(row.attachment_bytes ?? 0)
  )
}

// What a block's attachments weigh in a page, summed in SQL from their rows (no name is read):
// each page lists them all with the block (the session view's `attachments`, their ids, names,
// media types, sizes, checksums and URLs; a transcript's Markdown line each, the name in a code
// span, the media type escaped), up to 1000 a block, named by the sandbox (seventeenth outsider
// pass: 10 blocks of 1000 names of 400 U+0001 made the 4 MiB view 26 MiB and a transcript page
// past MCP's 16 MiB, none of it counted). A name's or media type's byte in UTF-8 is at most six
// bytes of either (a control character's `\u0001`; a code span's backtick fences, an escaped
// character's backslash in JSON, are fewer), and ATTACHMENT_ROW_BYTES covers the rest of one
// (ids of up to 200 characters, the session's id in its URL, the keys and numbers). Bytes, not
// characters: SQLite's length() of text stops at a NUL.
const ATTACHMENT_ROW_BYTES = 768
// One SQL expression, also used by the MCP transcript's weighing (src/mcp/server/resources.ts).
export const ATTACHMENT_BYTES = `(SELECT count(*) * ${ATTACHMENT_ROW_BYTES}
    + 6 * coalesce(sum(octet_length(a.media_type) + coalesce(octet_length(a.name), 0)), 0)
  FROM attachments a WHERE a.block_id = blocks.id)`

const BlockRowSchema = z.object({
  id: z.string(),
  session_id: z.string(),
  turn_id: z.string().nullable(),
  iteration_id: z.string().nullable(),
  position: z.number().int(),
  code: z.string(),
  stdout: z.string(),
  stderr: z.string(),
  result: z.string().nullable(),
  value: z.string().nullable(),
  error: z.string().nullable(),
  duration_ms: z.number().int().nullable(),
  timed_out: z.union([z.literal(0), z.literal(1)]),
  status: BlockStatusSchema,
  created_at: z.number().int(),
  finished_at: z.number().int().nullable(),
  survived: z.string().nullable(),
})

export type BlockRow = z.infer<typeof BlockRowSchema>

const parseBlockError = (v: unknown): BlockError => commonBlockError(v) ?? BlockErrorSchema.parse(v)

const blockFromRow = (r: BlockRow) => ({
  id: r.id,
  sessionId: r.session_id,
  turnId: r.turn_id,
  iterationId: r.iteration_id,
  position: r.position,
  code: r.code,
  stdout: r.stdout,
  stderr: r.stderr,
  result: decodeNullableJson(r.result),
  value: decodeNullableJson(r.value),
  error: r.error === null ? null : parseBlockError(decodeJson(r.error)),
  durationMs: r.duration_ms,
  timedOut: r.timed_out === 1,
  status: r.status,
  createdAt: r.created_at,
  finishedAt: r.finished_at,
  // What an interrupt, timeout or worker replacement left (src/sessions/survived.ts).
  survived: decodeNullableJson(r.survived),
})
export const BlockSchema = BlockRowSchema.transform(blockFromRow)
export type Block = z.output<typeof BlockSchema>

// BlockSchema.parse, by hand for a well-formed row (src/persistence/fast-shapes.ts).
export const parseBlockRow = (row: unknown): Block =>
  isBlockRow(row) ? blockFromRow(row) : BlockSchema.parse(row)

export const StartBlockInputSchema = z.object({
  id: z.string().min(1).max(200).optional(),
  sessionId: z.string().min(1),
  code: z.string(),
  turnId: z.string().min(1).nullable().optional(),
  iterationId: z.string().min(1).nullable().optional(),
  idempotencyKey: IdempotencyKeySchema.optional(),
  // When the block was accepted, if its row is stored later (the engine defers a sync block's row).
  createdAt: z.number().int().min(0).optional(),
})
export type StartBlockInput = z.input<typeof StartBlockInputSchema>

export const FinishBlockInputSchema = z.object({
  stdout: z.string().default(''),
  stderr: z.string().default(''),
  result: JsonValueSchema.nullable().default(null),
  // The last expression's value when the block also printed (result is then null).
  value: JsonValueSchema.nullable().default(null),
  error: BlockErrorSchema.nullable().default(null),
  durationMs: z.number().int().min(0),
  timedOut: z.boolean().default(false),
  survived: JsonValueSchema.nullable().default(null),
})
export type FinishBlockInput = z.input<typeof FinishBlockInputSchema> & {
  attachments?: readonly AttachmentInput[]
}

export type StartedBlock = {
  block: Block
  // True when the idempotency key was seen before: this is the first submission's block, not a new one.
  replayed: boolean
}

// Closes running blocks with an error (parameters: error, now, now, now); callers narrow the WHERE.
const ABANDON_RUNNING = `UPDATE blocks SET status = 'done', error = ?, finished_at = ?,
    duration_ms = CASE WHEN ? > created_at THEN ? - created_at ELSE 0 END
  WHERE status = 'running'`

const INSERT_BLOCK = 'INSERT INTO blocks (id, session_id, turn_id, iteration_id, position, code, created_at'
const NEXT_POSITION =
  'VALUES (?, ?, ?, ?, (SELECT coalesce(max(position), 0) + 1 FROM blocks WHERE session_id = ?), ?, ?'
// A finished block's outcome, in this order (outcomeValues).
const OUTCOME_COLUMNS = 'stdout, stderr, result, value, error, duration_ms, timed_out, survived, finished_at'
// Built once: a template literal per call is a new string the statement cache hashes again.
const INSERT_RUNNING = `${INSERT_BLOCK}) ${NEXT_POSITION}) RETURNING *`
const INSERT_FINISHED = `${INSERT_BLOCK}, ${OUTCOME_COLUMNS}, status) ${NEXT_POSITION}, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'done') RETURNING *`
const FINISH = `UPDATE blocks SET (${OUTCOME_COLUMNS}, status) = (?, ?, ?, ?, ?, ?, ?, ?, ?, 'done')
           WHERE id = ? AND status = 'running' RETURNING *`
const outcomeValues = (v: z.output<typeof FinishBlockInputSchema>, now: number) => [
  v.stdout,
  v.stderr,
  v.result === null ? null : encodeJson(v.result),
  v.value === null ? null : encodeJson(v.value),
  v.error === null ? null : encodeJson(v.error),
  v.durationMs,
  v.timedOut ? 1 : 0,
  v.survived === null ? null : encodeJson(v.survived),
  now,
]

const sessionNotFound = (sessionId: string) =>
  new VisError('db.session-not-found', `No session with id ${sessionId}.`, { sessionId })

export class BlocksRepo {
  constructor(
    private readonly ctx: RepoContext,
    private readonly attachments: AttachmentsRepo,
    private readonly idempotency: IdempotencyRepo,
  ) {}

  // Records a block as running, at the next position in its session. With an idempotency key the
  // lookup and the insert share one transaction, so two racing retries cannot both start a block.
  start(input: StartBlockInput): StartedBlock {
    const v = commonStartBlockInput(input) ?? parseInput(StartBlockInputSchema, input, 'blocks.start')
    return this.insert(v, undefined)
  }

  // Records a block that ran before its row was stored (the engine defers a sync block's row,
  // src/engine/event-log.ts): inserted already finished, so a short block is one row write and
  // never enters the blocks_running index. Same position rule and checks as start().
  startFinished(input: StartBlockInput, finish: FinishBlockInput): Block {
    const v = commonStartBlockInput(input) ?? parseInput(StartBlockInputSchema, input, 'blocks.start')
    if (v.idempotencyKey !== undefined) {
      throw new VisError('db.invalid-input', 'blocks.startFinished: a keyed block is stored when accepted.', {
        sessionId: v.sessionId,
      })
    }
    return this.insert(v, finish).block
  }

  private insert(
    v: z.output<typeof StartBlockInputSchema>,
    finish: FinishBlockInput | undefined,
  ): StartedBlock {
    const id = v.id ?? newId('blk')
    const { attachments = [], ...rest } = finish ?? {}
    const f =
      finish === undefined
        ? undefined
        : (commonFinishBlockInput(rest) ?? parseInput(FinishBlockInputSchema, rest, 'blocks.finish'))
    const prepared = this.attachments.prepare(attachments)
    return this.ctx.sql.tx((): StartedBlock => {
      // Several processes may start blocks in one session (nodes of a cluster; the CLI beside
      // `vis serve`): key lookup, next position and insert must be one critical section. SQLite:
      // IMMEDIATE takes the write lock up front (a deferred one could not upgrade and would fail
      // with SQLITE_BUSY); PostgreSQL: the session's row lock, whose row also proves the session
      // exists (one round trip fewer than checking again).
      const locked =
        this.ctx.dialect === 'postgres' &&
        this.ctx.sql.get('SELECT 1 FROM sessions WHERE id = ? FOR NO KEY UPDATE').get(v.sessionId) !==
          undefined
      if (v.idempotencyKey !== undefined) {
        const first = this.idempotency.lookup(v.sessionId, v.idempotencyKey)
        if (first !== undefined) return { block: this.require(first), replayed: true }
      }
      const turnId = v.turnId ?? null
      const iterationId = v.iterationId ?? null
      // SQLite, a block outside any turn: the insert's foreign key is the session check (its
      // violation is mapped below to the same error), one statement fewer per block. With a
      // turn the explicit checks run first, so a missing session still wins over a missing turn.
      const fkChecksSession = this.ctx.dialect === 'sqlite' && turnId === null && iterationId === null
      this.checkParents(v.sessionId, turnId, iterationId, locked || fkChecksSession)
      const created = v.createdAt ?? this.ctx.now()
      const startValues = [id, v.sessionId, turnId, iterationId, v.sessionId, v.code, created]
      let row: unknown
      try {
        // The next position and the stored row come with the insert itself: on PostgreSQL each
        // separate statement is a round trip to the server.
        row =
          f === undefined
            ? this.ctx.sql.get(INSERT_RUNNING).get(...startValues)
            : this.ctx.sql.get(INSERT_FINISHED).get(...startValues, ...outcomeValues(f, this.ctx.now()))
      } catch (err) {
        const kind = constraintViolation(err)
        if (kind === 'primary-key') {
          throw new VisError('db.block-exists', `A block with id ${id} already exists.`, {
            sessionId: v.sessionId,
            blockId: id,
          })
        }
        // Without a turn or an iteration the only foreign key of the row is its session's.
        if (kind === 'foreign-key' && fkChecksSession) throw sessionNotFound(v.sessionId)
        throw err
      }
      if (v.idempotencyKey !== undefined) this.idempotency.record(v.sessionId, v.idempotencyKey, id)
      if (prepared.length > 0) this.attachments.insertPrepared(id, prepared)
      return { block: parseBlockRow(row), replayed: false }
    }, 'immediate')
  }

  // Stores the outcome and its attachments in one transaction: a reader sees a running block or
  // a finished one with everything, never a finished block missing its attachments.
  finish(id: string, input: FinishBlockInput): Block {
    const { attachments = [], ...rest } = input
    const v = commonFinishBlockInput(rest) ?? parseInput(FinishBlockInputSchema, rest, 'blocks.finish')
    const prepared = this.attachments.prepare(attachments)
    return this.ctx.sql.tx(() => {
      // RETURNING: the finished row without a second read (a round trip on PostgreSQL).
      const row = this.ctx.sql.get(FINISH).get(...outcomeValues(v, this.ctx.now()), id)
      if (row === undefined) {
        const block = this.require(id)
        throw new VisError('db.block-finished', `Block ${id} has already finished.`, {
          sessionId: block.sessionId,
          blockId: id,
        })
      }
      if (prepared.length > 0) this.attachments.insertPrepared(id, prepared)
      return parseBlockRow(row)
    })
  }

  // Throws what finish() and startFinished() would for these outcome fields (not attachments,
  // whose check stores their bytes), without writing: a caller that recovers from a refused
  // outcome checks it before its transaction writes anything (src/engine/persist-outcome.ts).
  checkFinish(input: FinishBlockInput): void {
    const { attachments: _, ...rest } = input
    if (commonFinishBlockInput(rest) === undefined) parseInput(FinishBlockInputSchema, rest, 'blocks.finish')
  }

  // After a host restart no worker is left to finish a running block: close each one with an
  // error saying so, so nothing stays "running" forever. Returns how many were closed.
  abandonRunning(sessionId?: string, message = 'The host stopped while this block was running.'): number {
    const error = encodeJson({ code: 'block.abandoned', message })
    const now = this.ctx.now()
    const sql = `${ABANDON_RUNNING}${sessionId === undefined ? '' : ' AND session_id = ?'}`
    const args = sessionId === undefined ? [error, now, now, now] : [error, now, now, now, sessionId]
    return this.ctx.sql.get(sql).run(...args).changes
  }

  // A cluster node taking over sessions whose owner died (issue 19): closes their running blocks
  // with `code` and returns them as closed, so the caller can tell their watchers. One transaction.
  abandonRunningIn(
    sessionIds: readonly string[],
    message = 'The node running this block stopped.',
    code = 'block.abandoned',
  ): Block[] {
    const error = encodeJson({ code, message })
    return this.ctx.db.transaction(() => {
      const closed: Block[] = []
      for (const sessionId of sessionIds) {
        const now = this.ctx.now()
        // RETURNING *: the closed rows themselves, not ids to read back one by one.
        const rows = this.ctx.sql
          .get(`${ABANDON_RUNNING} AND session_id = ? RETURNING *`)
          .all(error, now, now, now, sessionId)
        for (const row of rows) closed.push(parseBlockRow(row))
      }
      return closed
    })()
  }

  get(id: string): Block | undefined {
    const row = this.ctx.sql.get('SELECT * FROM blocks WHERE id = ?').get(id)
    return row === undefined ? undefined : parseBlockRow(row)
  }

  require(id: string): Block {
    const b = this.get(id)
    if (!b) throw new VisError('db.block-not-found', `No block with id ${id}.`, { blockId: id })
    return b
  }

  listBySession(sessionId: string, options: { afterPosition?: number; limit?: number } = {}): Block[] {
    return this.ctx.sql
      .get('SELECT * FROM blocks WHERE session_id = ? AND position > ? ORDER BY position LIMIT ?')
      .all(sessionId, options.afterPosition ?? 0, options.limit ?? Number.MAX_SAFE_INTEGER)
      .map((row) => parseBlockRow(row))
  }

  // The last `limit` blocks before `beforePosition`, oldest first, each cut in the database:
  // code and stdout to their first `maxChars` characters, a result or value longer than that
  // left out (null), an error replaced by CUT_ERROR, so a view of a session costs the same whatever its blocks printed.
  // And bounded in bytes as sent (json-bytes.ts): blocks are read newest first, a few at a time,
  // and listed while their fields' JSON and their attachments as listed (ATTACHMENT_BYTES: the
  // caller reads those for the listed blocks) stay within `maxBytes` (the newest always), so neither the
  // read nor the answer of `?limit=1000` grows past it (sixteenth outsider pass: 720 blocks of
  // control characters, six bytes each in JSON, answered past V8's longest string); `before`
  // counts the blocks left out, for the next page. `display`: the answer also carries each code
  // formatted (`code_display`), so a code counts twice. `bytes`: what the listed blocks weigh.
  // `cut`: the ids of the blocks something was cut from.
  listSummaries(
    sessionId: string,
    options: { beforePosition: number; limit: number; maxChars: number; maxBytes: number; display?: boolean },
  ): { blocks: Block[]; cut: Set<string>; before: number; bytes: number } {
    const m = options.maxChars
    const read = this.ctx.sql.get(
      `SELECT id, session_id, turn_id, iteration_id, position, status, created_at, finished_at,
         duration_ms, timed_out, survived, '' AS stderr,
         substr(code, 1, ?) AS code, substr(stdout, 1, ?) AS stdout,
         CASE WHEN length(result) > ? THEN NULL ELSE result END AS result,
         CASE WHEN length(value) > ? THEN NULL ELSE value END AS value,
         CASE WHEN length(error) > ? THEN ? ELSE error END AS error,
         (length(code) > ? OR length(stdout) > ? OR length(result) > ? OR length(value) > ?
           OR length(error) > ?) AS cut,
         ${ATTACHMENT_BYTES} AS attachment_bytes
       FROM blocks WHERE session_id = ? AND position < ? ORDER BY position DESC LIMIT ?`,
    )
    const picked: Array<Record<string, unknown>> = []
    let bytes = 0
    let cursor = options.beforePosition
    let full = false
    while (!full && picked.length < options.limit) {
      const want = Math.min(SUMMARY_CHUNK, options.limit - picked.length)
      const rows = read.all(m, m, m, m, m, CUT_ERROR, m, m, m, m, m, sessionId, cursor, want) as Array<
        Record<string, unknown>
      >
      for (const row of rows) {
        const weight = summaryBytes(row, options.display === true)
        if (picked.length > 0 && bytes + weight > options.maxBytes) {
          full = true
          break
        }
        bytes += weight
        picked.push(row)
      }
      if (rows.length < want) break
      cursor = Number(rows.at(-1)!.position)
    }
    const cut = new Set<string>()
    const blocks = picked.reverse().map(({ cut: wasCut, attachment_bytes: _, ...row }) => {
      if (wasCut === 1 || wasCut === true) cut.add(row.id as string)
      return parseBlockRow(row)
    })
    const first = blocks[0]?.position ?? options.beforePosition
    const before = this.ctx.sql
      .get('SELECT count(*) AS n FROM blocks WHERE session_id = ? AND position < ?')
      .get(sessionId, first) as { n: number | string }
    return { blocks, cut, before: Number(before.n), bytes }
  }

  // How many blocks a session has, without reading one (what a listing of it shows).
  countBySession(sessionId: string): number {
    const row = this.ctx.sql.get('SELECT count(*) AS n FROM blocks WHERE session_id = ?').get(sessionId) as {
      n: number | string
    }
    return Number(row.n)
  }

  listByTurn(turnId: string): Block[] {
    return this.ctx.sql
      .get('SELECT * FROM blocks WHERE turn_id = ? ORDER BY position')
      .all(turnId)
      .map((row) => parseBlockRow(row))
  }

  counts(): Record<BlockStatus, number> {
    const rows = this.ctx.sql.get('SELECT status, count(*) AS n FROM blocks GROUP BY status').all() as {
      status: BlockStatus
      n: number
    }[]
    const out: Record<BlockStatus, number> = { running: 0, done: 0 }
    for (const r of rows) out[r.status] = r.n
    return out
  }

  // `sessionKnown`: the caller already read the session's row in this transaction.
  private checkParents(
    sessionId: string,
    turnId: string | null,
    iterationId: string | null,
    sessionKnown = false,
  ): void {
    if (
      !sessionKnown &&
      this.ctx.sql.get('SELECT 1 FROM sessions WHERE id = ?').get(sessionId) === undefined
    ) {
      throw sessionNotFound(sessionId)
    }
    if (iterationId !== null && turnId === null) {
      throw new VisError('db.invalid-input', 'blocks.start: an iterationId needs its turnId.', { sessionId })
    }
    if (turnId !== null) {
      const owner = this.ctx.sql.pluck('SELECT session_id FROM turns WHERE id = ?').get(turnId)
      if (owner !== sessionId) {
        throw new VisError('db.turn-not-found', `No turn ${turnId} in session ${sessionId}.`, {
          sessionId,
          turnId,
        })
      }
    }
    if (iterationId !== null) {
      const owner = this.ctx.sql.pluck('SELECT turn_id FROM iterations WHERE id = ?').get(iterationId)
      if (owner !== turnId) {
        throw new VisError('db.iteration-not-found', `No iteration ${iterationId} in turn ${turnId}.`, {
          sessionId,
          turnId,
          iterationId,
        })
      }
    }
  }
}
