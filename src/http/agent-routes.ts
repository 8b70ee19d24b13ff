import { z } from 'zod'
import { resolveModel } from '../agent/config.js'
import { agentFor } from '../agent/host.js'
import {
  ApprovalDecisionSchema,
  ApprovalViewSchema,
  ToolCallViewSchema,
  TurnBodySchema,
  TurnViewSchema,
  UsageViewSchema,
} from '../agent/schemas.js'
import { BLOCK_POSITION_MAX, MAX_LIST_OFFSET } from '../engine/schemas.js'
import { VisError } from '../util/errors.js'
import { err } from './errors.js'
import { onHangup } from './hangup.js'
import { INVALID, NOT_FOUND, prefersAsync, type RouteSpec, readBody, readQuery } from './routes.js'

const TurnResultSchema = TurnViewSchema.extend({ session_usage: UsageViewSchema })
const TurnListSchema = z.object({
  turns: z.array(TurnViewSchema),
  usage: UsageViewSchema,
  turns_before: z
    .number()
    .int()
    .describe('How many earlier turns are not listed. Ask for them with `?before=<next_before>`.'),
  next_before: z
    .number()
    .int()
    .nullable()
    .describe('The `before` that lists the earlier turns; null when there are none.'),
})
// Positions are 32-bit integers in PostgreSQL (as a block's, engine/schemas.ts).
const TurnListQuerySchema = z
  .object({
    before: z.coerce
      .number()
      .int()
      .min(0)
      .max(BLOCK_POSITION_MAX)
      .optional()
      .describe('List only turns whose position is below this (the previous page: `next_before`).'),
    limit: z.coerce.number().int().min(1).max(1000).default(100).describe('How many turns at most.'),
  })
  .strict()
// The approvals and a turn's journal are paged the same way: from `offset`, no more than fit
// 4 MiB of JSON (fitBytes), `next_offset` when some were left out.
const Offset = z.coerce
  .number()
  .int()
  .min(0)
  .max(MAX_LIST_OFFSET)
  .default(0)
  .describe('Skip this many (the previous page: its `next_offset`).')
const NextOffset = z
  .number()
  .int()
  .optional()
  .describe('Present when not all fit 4 MiB of JSON: the `offset` that lists the rest.')
const ApprovalsQuerySchema = z
  .object({
    status: ApprovalViewSchema.shape.status.optional().describe('Only approvals in this state.'),
    offset: Offset,
  })
  .strict()
const JournalQuerySchema = z.object({ offset: Offset }).strict()

const AgentInfoSchema = z.object({
  model: z
    .string()
    .nullable()
    .describe('The `<provider>/<model>` a turn uses when it names none; null when there is no usable one.'),
  problem: z
    .object({ code: z.string(), message: z.string() })
    .nullable()
    .describe(
      'Why there is no usable model (agent.no-model, agent.bad-model, agent.no-api-key), and how to configure one.',
    ),
})

const turnPath = (id: string, turnId: string) =>
  `/v1/sessions/${encodeURIComponent(id)}/turns/${encodeURIComponent(turnId)}`

// Agent turns over HTTP: a model writes the blocks; their events go out on the session's SSE.
export const AGENT_ROUTES: RouteSpec[] = [
  {
    method: 'get',
    path: '/v1/agent',
    operationId: 'getAgent',
    summary:
      "The model the server's configuration (VIS_MODEL, agent.json) gives a turn, or why there is none and how to set one. " +
      'Nothing is sent to the provider.',
    responses: { 200: { description: 'The default model.', schema: AgentInfoSchema } },
    handler(c, { engine }) {
      try {
        const spec = resolveModel(undefined, agentFor(engine).config)
        return c.json({ model: `${spec.provider}/${spec.model}`, problem: null })
      } catch (err) {
        // Only the configuration's own refusals are answers here; anything else is a fault.
        if (!(err instanceof VisError)) throw err
        return c.json({ model: null, problem: { code: err.code, message: err.message } })
      }
    },
  },
  {
    method: 'post',
    path: '/v1/sessions/:id/turns',
    operationId: 'runTurn',
    summary:
      'Run an agent turn: the model writes Python, the session runs it, until the answer. Waits for the turn, ' +
      'or with `Prefer: respond-async` answers 202 at once (follow the SSE events or poll the turn). Turns of a ' +
      'session run one at a time; a later one queues. `prompt` may be `/<template> args`. A client that ' +
      'disconnects while waiting cancels the turn (as the cancel route does); an async turn runs on.',
    body: TurnBodySchema,
    headers: [{ name: 'Prefer', description: '`respond-async` to answer 202 at once.', schema: z.string() }],
    responses: {
      200: {
        description: 'The finished turn (done, failed or cancelled).',
        schema: TurnResultSchema,
        headers: { Location: "The turn's own URL." },
      },
      202: {
        description: 'Accepted; the turn is queued or running.',
        schema: TurnViewSchema,
        headers: { Location: "The turn's own URL.", 'Preference-Applied': '`respond-async`.' },
      },
      400: err(
        'Invalid body, no usable model, a model the server does not configure (agent.model-not-allowed), or an unknown template.',
      ),
      404: NOT_FOUND,
      409: err('The session is closed.'),
    },
    async handler(c, { engine }) {
      const id = c.req.param('id')!
      const body = await readBody(c, TurnBodySchema)
      const agent = agentFor(engine)
      const sync = !prefersAsync(c)
      // A client that hangs up on a turn it waits for ends it: the model request is aborted and
      // the running block stopped, as the cancel route does (an async turn runs on).
      const hangup = new AbortController()
      if (sync)
        onHangup(c, () =>
          hangup.abort(
            new VisError(
              'turn.cancelled',
              'The turn was cancelled: the HTTP client waiting for it disconnected.',
              { sessionId: id },
            ),
          ),
        )
      // The client's model names an endpoint the server will post to: only a configured one.
      const model = body.model ? agent.clientModel(body.model, { sessionId: id, op: 'turn' }) : undefined
      const started = await agent.startTurn(id, body.prompt, {
        ...(model ? { model } : {}),
        ...(body.max_iterations ? { maxIterations: body.max_iterations } : {}),
        ...(body.budget ? { budget: body.budget } : {}),
        ...(sync ? { signal: hangup.signal } : {}),
      })
      c.header('Location', turnPath(id, started.turnId))
      if (!sync) {
        c.header('Preference-Applied', 'respond-async')
        return c.json(agent.getTurn(id, started.turnId), 202)
      }
      return c.json(await started.done, 200)
    },
  },
  {
    method: 'get',
    path: '/v1/sessions/:id/turns',
    operationId: 'listTurns',
    summary:
      "The session's last turns (`?limit=`, default 100; earlier ones with `?before=`), oldest first, with the " +
      "session's total usage. Each text is cut to 65 536 characters and a turn's iterations to its share " +
      '(`truncated`: GET the turn for all of it), and no more turns than fit 4 MiB of JSON (`turns_before` ' +
      'counts the rest). Queued turns come last, on the first page.',
    query: TurnListQuerySchema,
    responses: { 200: { description: 'The turns.', schema: TurnListSchema }, 400: INVALID, 404: NOT_FOUND },
    handler(c, { engine }) {
      const id = c.req.param('id')!
      const q = readQuery(c, TurnListQuerySchema)
      const agent = agentFor(engine)
      const page = agent.listTurnsPage(id, q)
      return c.json({
        turns: page.turns,
        usage: agent.sessionUsage(id),
        turns_before: page.before,
        next_before: page.nextBefore,
      })
    },
  },
  {
    method: 'get',
    path: '/v1/sessions/:id/turns/:turnId',
    operationId: 'getTurn',
    summary: 'A turn with its iterations (model request ids, text, tool calls, usage) and their blocks.',
    responses: { 200: { description: 'The turn.', schema: TurnViewSchema }, 404: NOT_FOUND },
    handler(c, { engine }) {
      return c.json(agentFor(engine).getTurn(c.req.param('id')!, c.req.param('turnId')!))
    },
  },
  {
    method: 'post',
    path: '/v1/sessions/:id/turns/:turnId/cancel',
    operationId: 'cancelTurn',
    summary:
      'Cancel a queued or running turn: the model request is aborted and the running block interrupted. ' +
      '`cancelled` is false when the turn had already ended.',
    responses: {
      200: {
        description: 'Whether a live turn was cancelled, and the turn.',
        schema: z.object({ cancelled: z.boolean(), turn: TurnViewSchema }),
      },
      404: NOT_FOUND,
    },
    async handler(c, { engine }) {
      const id = c.req.param('id')!
      const turnId = c.req.param('turnId')!
      const agent = agentFor(engine)
      agent.getTurn(id, turnId) // 404 for an unknown turn, before anything is cancelled
      const cancelled = await agent.cancelSettled(id, turnId)
      return c.json({ cancelled, turn: agent.getTurn(id, turnId) })
    },
  },
  {
    method: 'get',
    path: '/v1/sessions/:id/turns/:turnId/journal',
    operationId: 'turnJournal',
    summary:
      'Every tool call of the turn: tool, argument digest, duration, result size, and the approval with who gave it.',
    query: JournalQuerySchema,
    responses: {
      200: {
        description: 'The calls, in order.',
        schema: z.object({ calls: z.array(ToolCallViewSchema), next_offset: NextOffset }),
      },
      400: INVALID,
      404: NOT_FOUND,
    },
    handler(c, { engine }) {
      const q = readQuery(c, JournalQuerySchema)
      const page = agentFor(engine).journalPage(c.req.param('id')!, c.req.param('turnId')!, q.offset)
      return c.json({
        calls: page.calls,
        ...(page.nextOffset !== undefined ? { next_offset: page.nextOffset } : {}),
      })
    },
  },
  {
    method: 'get',
    path: '/v1/sessions/:id/approvals',
    operationId: 'listApprovals',
    summary:
      "The session's approvals (tool calls waiting for a person, and decided ones); `?status=pending`.",
    query: ApprovalsQuerySchema,
    responses: {
      200: {
        description: 'The approvals, oldest first.',
        schema: z.object({ approvals: z.array(ApprovalViewSchema), next_offset: NextOffset }),
      },
      400: INVALID,
      404: NOT_FOUND,
    },
    handler(c, { engine }) {
      const q = readQuery(c, ApprovalsQuerySchema)
      const page = agentFor(engine).approvalsPage(c.req.param('id')!, q.status, q.offset)
      return c.json({
        approvals: page.approvals,
        ...(page.nextOffset !== undefined ? { next_offset: page.nextOffset } : {}),
      })
    },
  },
  {
    method: 'post',
    path: '/v1/sessions/:id/approvals/:approvalId',
    operationId: 'decideApproval',
    summary:
      'Approve or deny a pending tool call. The waiting block goes on: an approved call runs, a denied one ' +
      'raises in the guest with the note.',
    body: ApprovalDecisionSchema,
    responses: {
      200: { description: 'The decided approval.', schema: ApprovalViewSchema },
      400: INVALID,
      404: NOT_FOUND,
      409: err('The approval was already decided or cancelled.'),
    },
    async handler(c, { engine }) {
      const body = await readBody(c, ApprovalDecisionSchema)
      const v = agentFor(engine).decide(
        c.req.param('id')!,
        c.req.param('approvalId')!,
        body.decision,
        body.by ?? 'http',
        body.note,
      )
      return c.json(v)
    },
  },
]
