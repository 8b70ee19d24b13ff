import { z } from 'zod'
import { type CamelKeys, camelSchema, toCamel, toSnake } from '../util/key-case.js'

// What a block's interrupt, timeout or worker replacement left of the session (issue 13,
// section 4). It goes back to the caller on the outcome, is stored with the block, and the
// model reads it as `session['survived']` in the next block. This schema is its one
// definition, in snake_case: the form that crosses to Python, storage, HTTP and MCP. The
// library's camelCase form (SurvivedResult) is derived from it.
export const CancelledCallSchema = z.object({
  tool: z.string(),
  call_id: z.number().int(),
})
export type CancelledCall = z.infer<typeof CancelledCallSchema>

export const SurvivedSchema = z.object({
  // interrupt: stopped on request; timeout: stopped at its timeoutMs; wall-clock: stopped at
  // the session's wall clock limit; node-lost: the node running it died or lost its lease, and
  // another node took the session over (src/cluster); disk-budget: the session's roots grew past
  // its disk budget (limits.diskBudgetMb).
  cause: z.enum(['interrupt', 'timeout', 'wall-clock', 'node-lost', 'disk-budget']),
  // The block did not stop in time: its worker was killed and a fresh one took over.
  worker_replaced: z.boolean(),
  // Names whose values are the same objects as before (the worker lived on).
  intact: z.array(z.string()),
  // Names rebuilt in the fresh worker from the definitions snapshot (functions, classes,
  // imports, small literal constants).
  restored: z.array(z.string()),
  // Names the session had that the fresh worker does not: plain values with no snapshot form,
  // and definitions that failed to rebuild.
  lost: z.array(z.string()),
  // Tool calls the block had in flight when it was stopped; their results were dropped.
  cancelled: z.array(CancelledCallSchema),
  // Why a definition failed to rebuild, or the replacement itself failed (name -> reason).
  errors: z.record(z.string()).optional(),
})
export type Survived = z.infer<typeof SurvivedSchema>

export type Cause = Survived['cause']

// The library's form (BlockResult.survived): camelCase, derived from SurvivedSchema. The
// snake_case names (`worker_replaced`, `cancelled[i].call_id`) stay readable as deprecated,
// non-enumerable aliases for one minor version.
export const SurvivedResultSchema = camelSchema(SurvivedSchema)
type Aliased = CamelKeys<Survived> & {
  /** @deprecated read `workerReplaced`; this snake_case alias goes in the next minor version. */
  readonly worker_replaced: boolean
  cancelled: Array<
    CamelKeys<CancelledCall> & {
      /** @deprecated read `callId`; this snake_case alias goes in the next minor version. */
      readonly call_id: number
    }
  >
}
export type SurvivedResult = Aliased

export const survivedResult = (s: Survived): SurvivedResult => toCamel(SurvivedSchema, s) as SurvivedResult
export const survivedWire = (s: CamelKeys<Survived>): Survived => toSnake(SurvivedSchema, s)

// The worker lived: every name the block left is intact.
export function survivedInPlace(
  cause: Cause,
  names: readonly string[],
  cancelled: CancelledCall[],
): Survived {
  return { cause, worker_replaced: false, intact: [...names], restored: [], lost: [], cancelled }
}

// What restore_defs (vis-guest/vis_guest/block.py) answers.
export const RestoreReportSchema = z
  .object({
    restored: z.array(z.string()).default([]),
    skipped: z.array(z.string()).default([]),
    failed: z.array(z.object({ name: z.string(), error: z.string().optional() }).passthrough()).default([]),
    error: z.string().optional(),
  })
  .passthrough()
export type RestoreReport = z.infer<typeof RestoreReportSchema>

// The worker was replaced: what the old one had (`before`, the names after the last block that
// finished) against what the snapshot rebuilt. Names the killed block made itself are unknown.
export function survivedReplacement(
  cause: Cause,
  before: readonly string[],
  report: RestoreReport | undefined,
  cancelled: CancelledCall[],
  failure?: string,
): Survived {
  const restored = report?.restored ?? []
  const errors: Record<string, string> = {}
  for (const f of report?.failed ?? []) errors[f.name] = f.error ?? 'it did not rebuild'
  if (report?.error) errors['(snapshot)'] = report.error
  if (failure) errors['(worker)'] = failure
  const back = new Set(restored)
  const lost = before.filter((n) => !back.has(n))
  const out: Survived = {
    cause,
    worker_replaced: failure === undefined,
    intact: [],
    restored,
    lost,
    cancelled,
  }
  if (Object.keys(errors).length > 0) out.errors = errors
  return out
}

// One line for people (`vis sessions show`).
export function describeSurvived(s: Survived): string {
  const list = (xs: readonly string[]) => (xs.length > 0 ? xs.join(', ') : '-')
  const parts = [
    `${s.cause}${s.worker_replaced ? ', worker replaced' : ''}`,
    `intact: ${list(s.intact)}`,
    `restored: ${list(s.restored)}`,
    `lost: ${list(s.lost)}`,
    `cancelled: ${list(s.cancelled.map((c) => `${c.tool}#${c.call_id}`))}`,
  ]
  return parts.join('; ')
}
