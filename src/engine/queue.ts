import type { BlockView } from './schemas.js'

// A block accepted behind another one in its session. It can finish without ever running:
// cancelled by a client, or out of time (its timeout_ms counts from submission, so the wait is
// part of it). Then `settle` answers its waiters at once instead of when the queue reaches it.
export type Waiting = {
  cancelled: boolean
  timer: NodeJS.Timeout
  settle: (b: BlockView) => void
  // Settles only when the block finished without running.
  early: Promise<BlockView>
}

export function waitingTicket(timeoutMs: number, onTimeout: () => void): Waiting {
  let settle!: (b: BlockView) => void
  const early = new Promise<BlockView>((r) => {
    settle = r
  })
  const timer = setTimeout(onTimeout, timeoutMs)
  timer.unref()
  return { cancelled: false, timer, settle, early }
}

// What a block that never ran reports.
export const unrunError = (why: 'cancelled' | 'queue-timeout', timeoutMs?: number) =>
  why === 'cancelled'
    ? { code: 'block.cancelled', message: 'Cancelled before it started; it never ran.' }
    : {
        code: 'block.queue-timeout',
        message: `Still waiting behind earlier blocks when its timeout_ms (${timeoutMs} ms) ran out; it never ran.`,
      }
