import { type CompactReason, compact, DEFAULT_KEEP } from './compaction.js'
import { contextWindow, estimateTokens } from './context-window.js'
import type { TurnRun } from './loop.js'
import type { Usage } from './providers/types.js'
import { modelRef, ownReasoning } from './transcript.js'
import { addUsage, costed } from './usage.js'

// Compaction as the turn loop drives it (loop.ts): when, against which window, and the
// `turn.compacted` event each fold leaves.

// What the loop keeps between its requests: where the turn's task sits in the history (a
// compaction moves it to the front), the tokens spent outside iterations (summaries), and the
// window a provider's refusal revealed (smaller than the configured one: the rest of the turn
// compacts before the request instead of being refused again).
export type TurnState = { taskIndex: number; usage: Usage; refusedAt?: number }

export const windowOf = (t: TurnRun, st: TurnState) =>
  Math.min(contextWindow(t.config, t.provider), st.refusedAt ?? Number.POSITIVE_INFINITY)

export const turnEstimate = (t: TurnRun) =>
  estimateTokens(t.system, ownReasoning(t.history, modelRef(t.provider)), t.toolCalling)

// Folds the turn's older part into a summary (compaction.ts) and says so as an event
// of the turn; false when there was nothing to fold.
export async function compactTurn(
  t: TurnRun,
  st: TurnState,
  reason: CompactReason,
  iterationId: string,
  note?: string,
): Promise<boolean> {
  const done = await compact({
    provider: t.provider,
    window: windowOf(t, st),
    system: t.system,
    toolCalling: t.toolCalling,
    history: t.history,
    taskIndex: st.taskIndex,
    keep: t.config.compaction?.keep ?? DEFAULT_KEEP,
    reason,
    ...(note !== undefined ? { note } : {}),
    signal: t.signal,
    live: t.liveState ?? (async () => undefined),
  })
  if (!done) return false
  st.taskIndex = 0
  st.usage = addUsage(st.usage, done.usage)
  const cost = costed(done.usage, t.config, t.provider)
  t.budget?.charge(cost)
  const { usage: _u, ...rest } = done
  t.emit('turn.compacted', {
    iteration_id: iterationId,
    ...rest,
    ...(note !== undefined ? { note } : {}),
    usage: cost,
  })
  return true
}
