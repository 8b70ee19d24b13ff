import { z } from 'zod'
import { BlockError, GuestBlockOutcome } from '../protocol/run-block.js'
import { type Survived, type SurvivedResult, SurvivedResultSchema, survivedResult } from './survived.js'

export { BlockError }

// What one block returns to the library's caller (Session.runBlock, createRuntime's
// runBlock): the one definition of a block's result. Its fields come from the guest's answer
// (src/protocol/run-block.ts) plus what the host adds; the other renderings are derived from
// it: the stored row (src/engine/block-finish.ts finishFromOutcome), the HTTP/MCP view (snake_case,
// src/engine/views.ts) and the agent's text. test/sessions/block-result.test.ts checks that
// each keeps every field. camelCase: this is the TypeScript library's surface. `result`, `value`
// and `error` are held to the block's output cap before any of those renderings (value-cap.ts).
export const BlockResult = GuestBlockOutcome.pick({
  stdout: true,
  result: true,
  value: true,
  error: true,
  attachments: true,
}).extend({
  // The host's timer stopped the block.
  timedOut: z.boolean().optional(),
  // The block did not stop in time: its worker was killed and a fresh one took over.
  workerReplaced: z.boolean().optional(),
  // What an interrupt, timeout or worker replacement left of the session (issue 13).
  survived: SurvivedResultSchema.optional(),
})
export type BlockResult = Omit<z.infer<typeof BlockResult>, 'survived'> & { survived?: SurvivedResult }

// A result inside the session, before it is handed out: `survived` still in the snake_case
// form it is stored in and sent to the next block as session['survived'].
export type HostBlockOutcome = Omit<BlockResult, 'survived'> & { survived?: Survived }

export function toBlockResult(outcome: HostBlockOutcome): BlockResult {
  if (outcome.survived === undefined) return outcome as BlockResult
  return { ...outcome, survived: survivedResult(outcome.survived) }
}

// The guest reports an interrupt it saw; when the host's own timer caused it, the
// model is told it was a timeout.
export function asTimeout<T extends HostBlockOutcome>(outcome: T, timeoutMs: number, note?: string): T {
  const message = `the block ran past its ${timeoutMs} ms limit and was stopped${note ? `; ${note}` : ''}`
  return { ...outcome, error: { ...(outcome.error ?? {}), phase: 'timeout', message }, timedOut: true }
}
