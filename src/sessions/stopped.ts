import { z } from 'zod'
import type { GuestBlockOutcome } from '../protocol/run-block.js'
import { asTimeout, type BlockError, type HostBlockOutcome } from './block-result.js'
import type { BlockDeadline } from './deadline.js'
import { type CancelledCall, type Survived, survivedInPlace } from './survived.js'

const Names = z.array(z.string())

// The guest's list of the session's own names after the block (vis_guest/block.py), or
// undefined when the outcome has none.
export function guestNames(outcome: GuestBlockOutcome): string[] | undefined {
  // The guest sends its names only when they changed (vis_guest/block.py).
  if (outcome.names === undefined) return undefined
  const parsed = Names.safeParse(outcome.names)
  return parsed.success ? parsed.data : undefined
}

// The guest's working directory after the block, when it said.
export function guestCwd(outcome: GuestBlockOutcome): string | undefined {
  return typeof outcome.cwd === 'string' && outcome.cwd.startsWith('/') ? outcome.cwd : undefined
}

// The guest's state reports are the host's to keep, not the caller's (host-owned keys such
// as timedOut or survived the guest cannot send: its schema drops them).
function hostView(outcome: GuestBlockOutcome): HostBlockOutcome {
  const { names: _n, cwd: _c, snapshot: _s, ...rest } = outcome
  return rest
}

// The block's error when its session went past its disk budget (stopped, or ended on its own
// before a pass saw it): the stable code, the budget, and what to do.
export function diskBudgetError(message: string, stopped = true): BlockError {
  const what = stopped ? 'the block was stopped' : "the block's writes went past the budget"
  return { phase: 'disk-budget', code: 'session.disk-budget', message: `${what}: ${message}` }
}

// A block that answered. When it had been told to stop, the model is told why (a timeout
// reads as one) and what survived: the worker lived, so every name is intact.
export function finishStopped(
  outcome: GuestBlockOutcome,
  deadline: BlockDeadline,
  timeoutMs: number | undefined,
  names: readonly string[],
  takeCancelled: () => CancelledCall[],
  diskMessage?: string,
): HostBlockOutcome {
  let out = hostView(outcome)
  const cause = deadline.cause
  if (cause === undefined) return out
  if (cause === 'timeout' && timeoutMs !== undefined && out.error?.phase === 'interrupted') {
    out = asTimeout(out, timeoutMs)
  }
  // Whatever the guest made of the interrupt (or of a refused write), the block ended because
  // of the budget.
  if (cause === 'disk-budget' && diskMessage !== undefined)
    out = { ...out, error: diskBudgetError(diskMessage) }
  return { ...out, survived: survivedInPlace(cause, names, takeCancelled()) }
}

// A block whose worker was killed: its partial output, why, and what the replacement restored.
export function killedOutcome(
  partial: HostBlockOutcome,
  deadline: BlockDeadline,
  timeoutMs: number | undefined,
  survived: Survived,
  diskMessage?: string,
): HostBlockOutcome {
  const failure = survived.errors?.['(worker)']
  const next = survived.worker_replaced
    ? "its worker was killed and replaced by a fresh one: functions, classes and imports were restored, other values are lost (session['survived'] lists them)"
    : `its worker was killed and no fresh worker could start (${failure}); this session must be rebuilt`
  const why = `${deadline.killed}; ${next}`
  const base: HostBlockOutcome = { ...partial, workerReplaced: survived.worker_replaced, survived }
  if (deadline.cause === 'timeout' && timeoutMs !== undefined) return asTimeout(base, timeoutMs, why)
  if (deadline.cause === 'disk-budget') return { ...base, error: diskBudgetError(`${diskMessage}; ${why}`) }
  if (deadline.cause === 'interrupt') {
    return { ...base, error: { phase: 'interrupted', message: `the block was interrupted: ${why}` } }
  }
  return { ...base, error: { phase: 'timeout', message: `the block was stopped: ${why}` }, timedOut: true }
}
