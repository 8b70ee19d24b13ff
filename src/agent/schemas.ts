import { z } from 'zod'
import { BudgetSchema } from './budget.js'

// The agent's public shapes (snake_case, as they travel as JSON); the OpenAPI document is built
// from them.

const Iso = z.string().describe('ISO 8601 time, UTC')

export const UsageViewSchema = z.object({
  input: z.number().int(),
  output: z.number().int(),
  reasoning: z.number().int(),
  cached: z.number().int(),
  cost_usd: z.number().nullable().describe('From the configured price table; null for unknown models.'),
})
export type UsageView = z.infer<typeof UsageViewSchema>

export const TurnBodySchema = z
  .object({
    prompt: z.string().min(1).max(1_000_000).describe('The user message, or `/<template> args`.'),
    model: z
      .string()
      .min(3)
      .max(300)
      .optional()
      .describe(
        "<provider>/<model> or an alias; default VIS_MODEL or agent.json. Only a model the server's agent.json or " +
          'VIS_MODEL configures (the default model and its provider, an alias, a provider with an entry in ' +
          '"providers"); anything else is agent.model-not-allowed.',
      ),
    max_iterations: z.number().int().min(1).max(1000).optional(),
    budget: BudgetSchema.optional().describe(
      "The turn's token/cost budget, shared with its sub_loop children; default agent.json `budget`.",
    ),
  })
  .strict()
export type TurnBody = z.infer<typeof TurnBodySchema>

export const IterationViewSchema = z.object({
  id: z.string(),
  position: z.number().int(),
  model: z.string().nullable(),
  request_id: z.string().nullable(),
  text: z.string().nullable().describe("The model's text in this reply."),
  tool_calls: z.array(z.object({ id: z.string(), name: z.string(), arguments: z.string() })),
  stop: z.string().nullable(),
  usage: UsageViewSchema.nullable(),
  block_ids: z.array(z.string()),
})
export type IterationView = z.infer<typeof IterationViewSchema>

export const TurnStatusViewSchema = z.enum(['queued', 'running', 'done', 'failed', 'cancelled'])

export const TurnViewSchema = z.object({
  id: z.string(),
  session_id: z.string(),
  position: z.number().int(),
  status: TurnStatusViewSchema,
  prompt: z.string().nullable(),
  model: z.string().nullable(),
  answer: z.string().nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  usage: UsageViewSchema.nullable(),
  created_at: Iso,
  finished_at: Iso.nullable(),
  iterations: z.array(IterationViewSchema),
  parent: z
    .object({ session_id: z.string(), turn_id: z.string(), block_id: z.string().nullable() })
    .nullable()
    .describe("A sub_loop() child's parent turn and the block that started it; null for a person's turn."),
  children: z
    .array(z.object({ session_id: z.string(), turn_id: z.string(), status: TurnStatusViewSchema }))
    .describe('The child turns its blocks started with sub_loop(), oldest first (each in its own session).'),
  tree_usage: UsageViewSchema.nullable().describe(
    "This turn's usage with its children's (recursively); cost null when one of them had no price.",
  ),
  truncated: z
    .literal(true)
    .optional()
    .describe(
      'In a list of turns only: something was cut from this copy (a text past 65 536 characters, earlier ' +
        'iterations or tool calls past its share, children past 1000). GET the turn for all of it.',
    ),
})
export type TurnView = z.infer<typeof TurnViewSchema>

export const ApprovalViewSchema = z.object({
  id: z.string(),
  session_id: z.string(),
  turn_id: z.string().nullable(),
  block_id: z.string().nullable(),
  tool: z.string(),
  args: z.unknown(),
  reason: z.string(),
  status: z.enum(['pending', 'approved', 'denied', 'cancelled']),
  decided_by: z.string().nullable(),
  note: z.string().nullable(),
  created_at: Iso,
  decided_at: Iso.nullable(),
})
export type ApprovalView = z.infer<typeof ApprovalViewSchema>

export const ApprovalDecisionSchema = z
  .object({
    decision: z.enum(['approve', 'deny']),
    note: z.string().max(10_000).optional(),
    by: z.string().min(1).max(200).optional().describe('Who decided; default "http".'),
  })
  .strict()
export type ApprovalDecision = z.infer<typeof ApprovalDecisionSchema>

export const ToolCallViewSchema = z.object({
  id: z.string(),
  turn_id: z.string().nullable(),
  block_id: z.string().nullable(),
  tool: z.string(),
  args_sha256: z.string(),
  args_bytes: z.number().int(),
  ok: z.boolean(),
  error: z.string().nullable(),
  duration_ms: z.number(),
  result_bytes: z.number().int().nullable(),
  approval: z.object({ id: z.string(), status: z.string(), decided_by: z.string().nullable() }).nullable(),
  created_at: Iso,
})
export type ToolCallView = z.infer<typeof ToolCallViewSchema>
