import { z } from 'zod'
import { newId } from '../persistence/ids.js'
import type { Store } from '../persistence/index.js'
import type { Statement } from '../persistence/statements.js'
import type { TurnStatus } from '../persistence/turns.js'
import { VisError } from '../util/errors.js'
import type { ApprovalRequest } from './approvals.js'
import { type ReasoningItem, ReasoningItemSchema, type Usage, UsageSchema } from './providers/types.js'
import {
  type ApprovalView,
  ApprovalViewSchema,
  type IterationView,
  type ToolCallView,
  ToolCallViewSchema,
  type TurnView,
  type UsageView,
} from './schemas.js'
import { TurnParentSchema } from './sub-loop.js'
import type { CostedUsage } from './usage.js'

// The agent's rows: turn outcomes and iteration replies (columns of migration 4 on the existing
// turns/iterations tables), approvals and the tool-call journal.

const iso = (ms: number) => new Date(ms).toISOString()
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms))
const parse = <T>(s: string | null): T | null => (s === null ? null : (JSON.parse(s) as T))
const ReasoningListSchema = z.array(ReasoningItemSchema)
const StoredUsage = UsageSchema.extend({ cost_usd: z.number().nullable().default(null) })

const TurnRow = z.object({
  id: z.string(),
  session_id: z.string(),
  position: z.number().int(),
  request: z.string().nullable(),
  status: z.enum(['open', 'done', 'failed', 'cancelled']),
  created_at: z.number().int(),
  finished_at: z.number().int().nullable(),
  model: z.string().nullable(),
  answer: z.string().nullable(),
  error: z.string().nullable(),
  usage: z.string().nullable(),
})

const IterRow = z.object({
  id: z.string(),
  position: z.number().int(),
  model: z.string().nullable(),
  request_id: z.string().nullable(),
  text: z.string().nullable(),
  tool_calls: z.string().nullable(),
  usage: z.string().nullable(),
  stop: z.string().nullable(),
})

// Stored as the view is shown, but with JSON text for args and epoch milliseconds for times.
const ApprovalRow = ApprovalViewSchema.extend({
  args: z.string(),
  created_at: z.number().int(),
  decided_at: z.number().int().nullable(),
})

// A journal row joined with its approval's status and who decided it.
const CallRow = ToolCallViewSchema.omit({ ok: true, approval: true, created_at: true }).extend({
  ok: z.number().int(),
  approval_id: z.string().nullable(),
  a_status: z.string().nullable(),
  a_by: z.string().nullable(),
  created_at: z.number().int(),
})

const TOKEN_KEYS = ['input', 'output', 'reasoning', 'cached'] as const
const CLOCK_STEP_MARGIN_MS = 10 * 60_000

// A stored usage as usageView reads it, checked by hand when it is the shape finishTurn writes.
function storedUsage(text: string): UsageView | null {
  const v = parse<unknown>(text)
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return usageView(text)
  const o = v as Record<string, unknown>
  const fast =
    TOKEN_KEYS.every((k) => o[k] === undefined || Number.isInteger(o[k])) &&
    (o.cost_usd === undefined || o.cost_usd === null || typeof o.cost_usd === 'number')
  if (!fast) return usageView(text)
  return {
    input: (o.input as number | undefined) ?? 0,
    output: (o.output as number | undefined) ?? 0,
    reasoning: (o.reasoning as number | undefined) ?? 0,
    cached: (o.cached as number | undefined) ?? 0,
    cost_usd: (o.cost_usd as number | null | undefined) ?? null,
  } as UsageView
}

const usageView = (s: string | null): UsageView | null => {
  const v = parse<unknown>(s)
  return v === null ? null : StoredUsage.parse(v)
}

export type IterationRecord = {
  model: string
  requestId: string | null
  text: string
  toolCalls: { id: string; name: string; arguments: string }[]
  usage: Usage & { cost_usd: number | null }
  stop: string | null
  // The reply's reasoning items, as the provider sent them (migration 8); null: none.
  reasoning: ReasoningItem[] | null
}

export class AgentRecords {
  // Each statement compiled once: better-sqlite3 compiles the SQL on every prepare(), which was
  // ~0.1 ms of every agent iteration (addIteration). Every SQL text here is a constant.
  private readonly statements = new Map<string, Statement>()
  private readonly db = {
    prepare: (sql: string): Statement => {
      let stmt = this.statements.get(sql)
      if (!stmt) {
        stmt = this.store.db.prepare(sql)
        this.statements.set(sql, stmt)
      }
      return stmt
    },
  }

  constructor(private readonly store: Store) {}

  // The iteration and what the model answered, in one commit.
  // Atomic: nothing in it catches a failure and goes on, so the nested insert needs no savepoint.
  // Committed without waiting for the disk (with durability `full`, an fsync on the JS thread
  // every iteration): a killed process keeps it, and the next acknowledgement (the block's
  // result, the turn's end) fsyncs the log it is in before anyone is told.
  addIteration(turnId: string, id: string, r: IterationRecord): void {
    this.store.lazily(() =>
      this.store.transaction(
        () => {
          this.store.turns.addIteration(turnId, id)
          this.db
            .prepare(
              'UPDATE iterations SET model = ?, request_id = ?, text = ?, tool_calls = ?, usage = ?, stop = ?, reasoning = ? WHERE id = ?',
            )
            .run(
              r.model,
              r.requestId,
              r.text,
              JSON.stringify(r.toolCalls),
              JSON.stringify(r.usage),
              r.stop,
              r.reasoning?.length ? JSON.stringify(r.reasoning) : null,
              id,
            )
        },
        { nested: 'atomic' },
      ),
    )
  }

  setTurnModel(id: string, model: string): void {
    this.db.prepare('UPDATE turns SET model = ? WHERE id = ?').run(model, id)
  }

  finishTurn(
    id: string,
    status: Exclude<TurnStatus, 'open'>,
    out: { answer: string | null; error: { code: string; message: string } | null; usage: UsageView },
  ): void {
    this.store.transaction(() => {
      this.db
        .prepare('UPDATE turns SET answer = ?, error = ?, usage = ? WHERE id = ?')
        .run(out.answer, out.error ? JSON.stringify(out.error) : null, JSON.stringify(out.usage), id)
      this.store.turns.finish(id, status)
    })
  }

  turn(id: string): TurnView | undefined {
    const row = this.db.prepare('SELECT * FROM turns WHERE id = ?').get(id)
    if (row === undefined) return undefined
    const t = TurnRow.parse(row)
    const iters = this.db
      .prepare('SELECT * FROM iterations WHERE turn_id = ? ORDER BY position')
      .all(id)
      .map((r) => IterRow.parse(r))
    const blocks = this.db
      .prepare('SELECT id, iteration_id FROM blocks WHERE turn_id = ? ORDER BY position')
      .all(id) as { id: string; iteration_id: string | null }[]
    const request = parse<unknown>(t.request)
    const iterations: IterationView[] = iters.map((i) => ({
      id: i.id,
      position: i.position,
      model: i.model,
      request_id: i.request_id,
      text: i.text,
      tool_calls: parse<IterationView['tool_calls']>(i.tool_calls) ?? [],
      stop: i.stop,
      usage: usageView(i.usage),
      block_ids: blocks.filter((b) => b.iteration_id === i.id).map((b) => b.id),
    }))
    const parent = TurnParentSchema.safeParse((request as { parent?: unknown } | null)?.parent)
    const children = this.childTurns(t.session_id, t.id, t.created_at)
    const usage = usageView(t.usage)
    return {
      id: t.id,
      session_id: t.session_id,
      position: t.position,
      status: t.status === 'open' ? 'running' : t.status,
      prompt:
        typeof request === 'object' && request !== null
          ? String((request as { prompt?: unknown }).prompt ?? '')
          : null,
      model: t.model,
      answer: t.answer,
      error: parse(t.error),
      usage,
      created_at: iso(t.created_at),
      finished_at: isoOrNull(t.finished_at),
      iterations,
      parent: parent.success ? parent.data : null,
      children: children.map((c) => ({ session_id: c.session_id, turn_id: c.id, status: c.status })),
      tree_usage: treeUsage(usage, children),
    }
  }

  // The turns sub_loop() started from this one: their request names it as parent, its keys in
  // the order sub-loop.ts writes them (the row is the request's JSON text as sent).
  // A child starts after its parent (turns_by_created bounds the scan to the turns since, less
  // a margin for a wall clock stepped back meanwhile).
  private childTurns(sessionId: string, turnId: string, since: number): TurnView[] {
    const pattern = `%"parent":{"session_id":${JSON.stringify(sessionId)},"turn_id":${JSON.stringify(turnId)},%`
    const ids = this.db
      .prepare('SELECT id FROM turns WHERE created_at >= ? AND request LIKE ? ORDER BY created_at, id')
      .all(since - CLOCK_STEP_MARGIN_MS, pattern) as { id: string }[]
    return ids.flatMap((r) => {
      const v = this.turn(r.id)
      return v && v.parent?.turn_id === turnId ? [v] : []
    })
  }

  // What a turn was asked with (its request JSON) and each iteration's reasoning items, by
  // iteration id: with the view, what replay.ts needs to rebuild the turn's messages.
  replayRows(id: string): { request: unknown; reasoning: Map<string, ReasoningItem[]> } {
    const row = this.db.prepare('SELECT request FROM turns WHERE id = ?').get(id) as
      | { request: string | null }
      | undefined
    const reasoning = new Map<string, ReasoningItem[]>()
    const rows = this.db
      .prepare('SELECT id, reasoning FROM iterations WHERE turn_id = ? AND reasoning IS NOT NULL')
      .all(id) as { id: string; reasoning: string }[]
    for (const r of rows) {
      // Validated as it is read back (a row that is not a list of reasoning items is left out,
      // never sent), but kept as stored: zod would reorder the keys, and the bytes sent must be
      // those the provider streamed.
      const items: unknown = JSON.parse(r.reasoning)
      if (ReasoningListSchema.safeParse(items).success && (items as unknown[]).length > 0)
        reasoning.set(r.id, items as ReasoningItem[])
    }
    return { request: parse<unknown>(row?.request ?? null), reasoning }
  }

  requireTurn(sessionId: string, id: string): TurnView {
    const t = this.turn(id)
    if (!t || t.session_id !== sessionId) {
      throw new VisError('turn.not-found', `No turn ${id} in session ${sessionId}.`, {
        sessionId,
        turnId: id,
      })
    }
    return t
  }

  // The session's usage: its stored turns' own usages summed, at every turn's end. Each row is
  // checked by hand (through zod, one turn at a time, this grew with the session); a row that is
  // not what finishTurn writes goes through the schema, which refuses it as it always did. Summed
  // here rather than in SQL: the same statement serves SQLite and PostgreSQL. The cost is known
  // only when every turn's is.
  sessionUsage(sessionId: string): CostedUsage {
    const rows = this.db
      .prepare('SELECT usage FROM turns WHERE session_id = ? AND usage IS NOT NULL ORDER BY position')
      .all(sessionId) as { usage: string }[]
    const sum: CostedUsage = { input: 0, output: 0, reasoning: 0, cached: 0, cost_usd: 0 }
    let priced = true
    for (const r of rows) {
      const u = storedUsage(r.usage)
      if (u === null) continue
      sum.input += u.input
      sum.output += u.output
      sum.reasoning += u.reasoning
      sum.cached += u.cached
      if (u.cost_usd === null) priced = false
      else sum.cost_usd = (sum.cost_usd ?? 0) + u.cost_usd
    }
    return { ...sum, cost_usd: priced ? Math.round((sum.cost_usd ?? 0) * 1e8) / 1e8 : null }
  }

  // The session's stored turns below position `before`, newest first, read a few at a time: a
  // page of turns (turn-page.ts) stops reading once it is full.
  *turnsNewestFirst(sessionId: string, before: number): Generator<TurnView> {
    let cursor = before
    for (;;) {
      const rows = this.db
        .prepare(
          'SELECT id, position FROM turns WHERE session_id = ? AND position < ? ORDER BY position DESC LIMIT 8',
        )
        .all(sessionId, cursor) as { id: string; position: number }[]
      for (const r of rows) {
        const t = this.turn(r.id)
        if (t) yield t
      }
      if (rows.length < 8) return
      cursor = rows.at(-1)!.position
    }
  }

  countTurnsBefore(sessionId: string, before: number): number {
    const row = this.db
      .prepare('SELECT count(*) AS n FROM turns WHERE session_id = ? AND position < ?')
      .get(sessionId, before) as { n: number | string }
    return Number(row.n)
  }

  turnIds(sessionId: string): string[] {
    return (
      this.db.prepare('SELECT id FROM turns WHERE session_id = ? ORDER BY position').all(sessionId) as {
        id: string
      }[]
    ).map((r) => r.id)
  }

  // Agent turns (those with a model) a stopped host left open, and approvals it left pending:
  // nobody runs or answers them any more. Turns opened through the block API are not touched,
  // nor those of sessions another live process on this home runs (`ownedElsewhere`).
  // Per-home semantics: on PostgreSQL the open turns may be other live nodes', so nothing is closed.
  abandonLeftovers(ownedElsewhere: (sessionId: string) => boolean = () => false): number {
    if (this.store.dialect === 'postgres') return 0
    const usage = JSON.stringify({ input: 0, output: 0, reasoning: 0, cached: 0, cost_usd: null })
    const error = JSON.stringify({
      code: 'turn.abandoned',
      message: 'The host stopped while this turn was running.',
    })
    const now = Date.now()
    const sessions = (
      this.db
        .prepare(
          `SELECT DISTINCT session_id FROM turns WHERE status = 'open' AND model IS NOT NULL
           UNION SELECT DISTINCT session_id FROM approvals WHERE status = 'pending'`,
        )
        .all() as { session_id: string }[]
    )
      .map((r) => r.session_id)
      .filter((id) => !ownedElsewhere(id))
    if (sessions.length === 0) return 0
    return this.store.transaction(() => {
      let closed = 0
      for (const id of sessions) {
        this.db
          .prepare(
            "UPDATE approvals SET status = 'cancelled', note = 'the host stopped', decided_at = ? WHERE status = 'pending' AND session_id = ?",
          )
          .run(now, id)
        closed += this.db
          .prepare(
            `UPDATE turns SET status = 'failed', finished_at = ?, error = ?, usage = coalesce(usage, ?)
             WHERE status = 'open' AND model IS NOT NULL AND session_id = ?`,
          )
          .run(now, error, usage, id).changes
      }
      return closed
    })
  }

  // ---- approvals ----

  addApproval(a: Omit<ApprovalRequest, 'signal'>): ApprovalView {
    const id = newId('apr')
    this.db
      .prepare(
        'INSERT INTO approvals (id, session_id, turn_id, block_id, tool, args, reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(id, a.sessionId, a.turnId, a.blockId, a.tool, JSON.stringify(a.args ?? null), a.reason, Date.now())
    return this.approval(id)!
  }

  // Settles a pending approval; false when it was settled already.
  settleApproval(
    id: string,
    status: 'approved' | 'denied' | 'cancelled',
    by: string | null,
    note: string | null,
  ): boolean {
    return (
      this.db
        .prepare(
          "UPDATE approvals SET status = ?, decided_by = ?, note = ?, decided_at = ? WHERE id = ? AND status = 'pending'",
        )
        .run(status, by, note, Date.now(), id).changes === 1
    )
  }

  approval(id: string): ApprovalView | undefined {
    const row = this.db.prepare('SELECT * FROM approvals WHERE id = ?').get(id)
    if (row === undefined) return undefined
    const a = ApprovalRow.parse(row)
    return {
      ...a,
      args: JSON.parse(a.args),
      created_at: iso(a.created_at),
      decided_at: isoOrNull(a.decided_at),
    }
  }

  // The session's approvals from the `offset`th on, oldest first, read a few at a time: a page
  // (fitBytes) stops reading once it is full.
  *approvalsFrom(
    sessionId: string,
    status: ApprovalView['status'] | undefined,
    offset: number,
  ): Generator<ApprovalView> {
    for (let at = offset; ; at += 8) {
      const rows = (
        status
          ? this.db
              .prepare(
                'SELECT id FROM approvals WHERE session_id = ? AND status = ? ORDER BY created_at, id LIMIT 8 OFFSET ?',
              )
              .all(sessionId, status, at)
          : this.db
              .prepare(
                'SELECT id FROM approvals WHERE session_id = ? ORDER BY created_at, id LIMIT 8 OFFSET ?',
              )
              .all(sessionId, at)
      ) as { id: string }[]
      for (const r of rows) yield this.approval(r.id)!
      if (rows.length < 8) return
    }
  }

  approvals(sessionId: string, status?: ApprovalView['status']): ApprovalView[] {
    const rows = (
      status
        ? this.db
            .prepare('SELECT id FROM approvals WHERE session_id = ? AND status = ? ORDER BY created_at')
            .all(sessionId, status)
        : this.db.prepare('SELECT id FROM approvals WHERE session_id = ? ORDER BY created_at').all(sessionId)
    ) as { id: string }[]
    return rows.map((r) => this.approval(r.id)!)
  }

  // ---- the journal ----

  addToolCall(c: {
    sessionId: string
    turnId: string | null
    blockId: string | null
    tool: string
    argsSha256: string
    argsBytes: number
    ok: boolean
    error: string | null
    durationMs: number
    resultBytes: number | null
    approvalId: string | null
  }): void {
    this.db
      .prepare(
        `INSERT INTO tool_calls (id, session_id, turn_id, block_id, tool, args_sha256, args_bytes, ok, error,
           duration_ms, result_bytes, approval_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        newId('call'),
        c.sessionId,
        c.turnId,
        c.blockId,
        c.tool,
        c.argsSha256,
        c.argsBytes,
        c.ok ? 1 : 0,
        c.error,
        c.durationMs,
        c.resultBytes,
        c.approvalId,
        Date.now(),
      )
  }

  toolCalls(turnId: string): ToolCallView[] {
    return [...this.toolCallsFrom(turnId, 0, Number.MAX_SAFE_INTEGER)]
  }

  // The turn's journal from its `offset`th call on, in order, read a few at a time (`chunk`): a
  // page (fitBytes) stops reading once it is full.
  *toolCallsFrom(turnId: string, offset: number, chunk = 64): Generator<ToolCallView> {
    for (let at = offset; ; at += chunk) {
      const rows = this.toolCallRows(turnId, at, chunk)
      yield* rows
      if (rows.length < chunk) return
    }
  }

  private toolCallRows(turnId: string, offset: number, limit: number): ToolCallView[] {
    return this.db
      .prepare(
        `SELECT c.*, a.status AS a_status, a.decided_by AS a_by FROM tool_calls c
         LEFT JOIN approvals a ON a.id = c.approval_id WHERE c.turn_id = ? ORDER BY c.created_at, c.rowid
         LIMIT ? OFFSET ?`,
      )
      .all(turnId, limit, offset)
      .map((r) => {
        const c = CallRow.parse(r)
        return {
          id: c.id,
          turn_id: c.turn_id,
          block_id: c.block_id,
          tool: c.tool,
          args_sha256: c.args_sha256,
          args_bytes: c.args_bytes,
          ok: c.ok === 1,
          error: c.error,
          duration_ms: c.duration_ms,
          result_bytes: c.result_bytes,
          approval: c.approval_id
            ? { id: c.approval_id, status: c.a_status ?? 'unknown', decided_by: c.a_by }
            : null,
          created_at: iso(c.created_at),
        }
      })
  }
}

// A turn's usage with its children's trees; null while nothing is known yet.
function treeUsage(own: UsageView | null, children: TurnView[]): UsageView | null {
  const parts = [own, ...children.map((c) => c.tree_usage)].filter((u): u is UsageView => u !== null)
  if (parts.length === 0) return null
  const sum = (k: 'input' | 'output' | 'reasoning' | 'cached') => parts.reduce((a, u) => a + u[k], 0)
  const priced = parts.every((u) => u.cost_usd !== null)
  const cost = parts.reduce((a, u) => a + (u.cost_usd ?? 0), 0)
  return {
    input: sum('input'),
    output: sum('output'),
    reasoning: sum('reasoning'),
    cached: sum('cached'),
    cost_usd: priced ? Math.round(cost * 1e8) / 1e8 : null,
  }
}
