import type { Context } from 'hono'
import type { Engine, SubmittedBlock } from '../engine/engine.js'
import { stopBlock } from '../engine/stop-block.js'

// Registers what to do when the client disconnects before its answer is written.
export type OnHangup = (stop: () => void) => void

// A synchronous request (a block or a turn the client waits for) whose client disconnects before
// the answer is written: stop() ends the work, as Ctrl-C would, since nobody waits for it any
// more. The node adapter aborts the request's signal when the connection closes first; once the
// answer is written it never fires.
export function onHangup(c: Context, stop: () => void): void {
  const signal = c.req.raw.signal
  if (signal.aborted) stop()
  else signal.addEventListener('abort', stop, { once: true })
}

// A synchronous block whose client hangs up is stopped (cancelled while queued, interrupted once
// running), like a turn. Not when the client sent an Idempotency-Key: it said it may retry after
// a lost answer, and the retry gets the first submission's outcome, so that block runs to its end.
export function stopBlockOnHangup(
  hangup: OnHangup,
  engine: Engine,
  sessionId: string,
  submitted: SubmittedBlock,
  idempotencyKey: string | undefined,
): void {
  if (idempotencyKey !== undefined || submitted.replayed) return
  let ended = false
  const end = () => {
    ended = true
  }
  submitted.done.then(end, end)
  hangup(() => void stopBlock(engine, sessionId, submitted.id, () => ended))
}
