import { z } from 'zod'
import { VisError } from '../util/errors.js'
import type { CostedUsage } from './usage.js'

// A turn's token and cost budget (issue 31 §1): agent.json `budget`, or per turn (library
// `budget`, HTTP `budget`). A sub_loop child draws on its parent's: what a child spends is the
// parent's too, so every child has exactly the tree's remaining budget, and children running
// at once cannot together spend past it by more than the requests already in flight.
// The loop checks before each request (a model's reply cannot be refused half-way, and the
// tokens it spent are spent): the turn that finds the budget spent ends `failed` with
// agent.budget-exceeded, and a child's end reaches its parent's block as that error.

export const BudgetSchema = z
  .object({
    tokens: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('Input plus output tokens the turn and its sub_loop children may use, summaries included.'),
    cost_usd: z
      .number()
      .positive()
      .optional()
      .describe('US dollars the turn and its children may spend (needs a price for each model used).'),
  })
  .strict()
export type Budget = z.infer<typeof BudgetSchema>

export class TurnBudget {
  private tokens = 0
  private cost = 0

  // `limit`: this turn's own (none for a child: its parent's applies); `parent`: the budget of
  // the turn whose block started this one.
  constructor(
    private readonly limit: Budget,
    private readonly parent?: TurnBudget,
  ) {}

  // A child's: no limit of its own, its spending charged up the tree.
  child(): TurnBudget {
    return new TurnBudget({}, this)
  }

  // Whether a cost limit applies to this turn (its own or an ancestor's): then each model it
  // asks needs a price, or the limit could not be kept.
  get costLimited(): boolean {
    return this.limit.cost_usd !== undefined || (this.parent?.costLimited ?? false)
  }

  charge(u: CostedUsage): void {
    this.tokens += u.input + u.output
    this.cost += u.cost_usd ?? 0
    this.parent?.charge(u)
  }

  // Why no more may be spent (the first spent budget up the tree), or undefined.
  spent(below = false): string | undefined {
    const { tokens, cost_usd } = this.limit
    const whose = below ? "the parent turn's budget" : "the turn's budget"
    if (tokens !== undefined && this.tokens >= tokens)
      return `${this.tokens} tokens used of ${whose} of ${tokens}`
    if (cost_usd !== undefined && this.cost >= cost_usd)
      return `$${this.cost.toFixed(4)} spent of ${whose} of $${cost_usd}`
    return this.parent?.spent(true)
  }
}

export function budgetExceeded(why: string, context: { sessionId: string; turnId: string }): VisError {
  return new VisError(
    'agent.budget-exceeded',
    `The turn stopped before its next model request: ${why}. Raise the budget (agent.json "budget", or the turn's own) or split the task.`,
    context,
  )
}

export function unpriced(model: string, context: { sessionId: string }): VisError {
  return new VisError(
    'agent.budget-unpriced',
    `A cost budget applies, but ${model} has no price in agent.json "prices", so its cost cannot be counted. ` +
      'Add its price, or use a token budget instead.',
    { ...context, model },
  )
}
