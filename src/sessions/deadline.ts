import type { Cause } from './survived.js'

// At most this long between interrupting a block and killing its worker (issue 13: "a short
// grace, at most 2 s"). A block that honours KeyboardInterrupt ends within milliseconds; the
// grace only has to cover unwinding (finally blocks, the guest runtime's error report) on a
// loaded machine.
export const DEFAULT_GRACE_MS = 1500
export const MAX_GRACE_MS = 2000

export type DeadlineHooks = {
  // Sends the interrupt (the block may ignore it).
  interrupt: () => Promise<unknown>
  // Kills the worker's process tree now.
  kill: (reason: string) => void
}

export type DeadlineOptions = {
  timeoutMs?: number
  graceMs: number
  // The session's wall clock: past it the worker is killed without asking first.
  wallClockMs: number
  // The most a block's clocks may stand still in all (holds): without a bound, a guest could
  // chain approval requests to run past every deadline while another thread computes.
  maxHoldMs?: number
}

// Enough for one approval left to its default timeout (approvals.timeoutMs, 600 s).
export const DEFAULT_MAX_HOLD_MS = 600_000

// The hard bound on one block. At its timeout (or on an interrupt request) the block is
// interrupted; if it has not ended `graceMs` later, the worker is killed. A guest can ignore
// SIGINT, swallow KeyboardInterrupt or sit in one long C call, but it cannot outlive the kill.
export class BlockDeadline {
  // Why the block was told to stop, once it was.
  cause: Cause | undefined
  // Set once the worker was killed (by this deadline, or by the worker itself retiring while
  // the block was being stopped): the session replaces the worker instead of retiring.
  killed: string | undefined
  // The timeout and the wall clock, which holds pause; the grace after a stop is never paused.
  private readonly clocks: PausableTimer[] = []
  private grace: NodeJS.Timeout | undefined
  private holds = 0
  // Time spent held so far, and since when the current hold runs (undefined: not held).
  private heldMs = 0
  private heldSince: number | undefined
  private holdCap: NodeJS.Timeout | undefined
  private holdSpent = false
  private holdLimit = 0

  constructor(
    private readonly hooks: DeadlineHooks,
    private readonly opts: DeadlineOptions,
  ) {
    if (opts.timeoutMs !== undefined) {
      this.clocks.push(new PausableTimer(opts.timeoutMs, () => void this.stop('timeout')))
    }
    this.clocks.push(
      new PausableTimer(opts.wallClockMs, () => {
        this.cause ??= 'wall-clock'
        this.kill(`the block ran past the wall clock limit of ${opts.wallClockMs} ms`)
      }),
    )
  }

  // Time the block spends waiting on a person (an approval) is not the block's own: while a hold
  // is out, neither the timeout nor the wall clock runs. What ends the wait is bounded elsewhere
  // (the approval's own timeout, the caller's interrupt, which still stops the block at once).
  // Returns the release; releasing twice is harmless.
  // Holds stand still for at most `capMs` in all (the largest any hold of this block asked for,
  // never above `maxHoldMs`); past it the clocks run again, held or not. An approval asks for its
  // own timeout: one wait for a person fits, a chain of them does not extend the block further.
  hold(capMs: number = DEFAULT_MAX_HOLD_MS): () => void {
    if (this.killed !== undefined || this.holdSpent) return () => {}
    const most = this.opts.maxHoldMs ?? DEFAULT_MAX_HOLD_MS
    this.holdLimit = Math.min(most, Math.max(this.holdLimit, capMs))
    if (this.holds++ === 0) this.pauseClocks()
    let released = false
    return () => {
      if (released) return
      released = true
      if (--this.holds === 0) this.resumeClocks()
    }
  }

  private pauseClocks(): void {
    for (const c of this.clocks) c.pause()
    this.heldSince = performance.now()
    const left = this.holdLimit - this.heldMs
    this.holdCap = setTimeout(
      () => {
        this.holdSpent = true
        this.resumeClocks()
      },
      Math.max(0, left),
    )
  }

  private resumeClocks(): void {
    if (this.heldSince === undefined) return
    this.heldMs += performance.now() - this.heldSince
    this.heldSince = undefined
    clearTimeout(this.holdCap)
    if (this.killed === undefined) for (const c of this.clocks) c.resume()
  }

  // Interrupts the block and arms the kill. A second request re-sends the interrupt only.
  stop(cause: Cause): Promise<unknown> {
    if (this.cause === undefined) {
      this.cause = cause
      const grace = this.opts.graceMs
      this.grace = setTimeout(
        () => this.kill(`it did not stop within ${grace} ms of being interrupted (${this.describe()})`),
        grace,
      )
    }
    return this.hooks.interrupt()
  }

  // The worker went away while the block was being stopped (its interrupt was not
  // acknowledged): that is this deadline's kill too.
  adopt(reason: string): boolean {
    if (this.cause === undefined || this.killed !== undefined) return this.killed !== undefined
    this.killed = reason
    this.clear()
    return true
  }

  kill(reason: string): void {
    if (this.killed !== undefined) return
    this.killed = reason
    this.clear()
    this.hooks.kill(reason)
  }

  clear(): void {
    clearTimeout(this.holdCap)
    for (const c of this.clocks) c.cancel()
    if (this.grace !== undefined) clearTimeout(this.grace)
    this.grace = undefined
  }

  private describe(): string {
    if (this.cause === 'timeout') return `its timeout was ${this.opts.timeoutMs} ms`
    if (this.cause === 'wall-clock') return `the wall clock limit is ${this.opts.wallClockMs} ms`
    if (this.cause === 'disk-budget') return 'its session went past its disk budget'
    return 'interrupted on request'
  }
}

// A one-shot timer that can stop running and go on later with the time it had left.
class PausableTimer {
  private timer: NodeJS.Timeout | undefined
  private dueAt: number
  private left: number | undefined
  private done = false

  constructor(
    ms: number,
    private readonly fire: () => void,
  ) {
    this.dueAt = performance.now() + ms
    this.arm(ms)
  }

  pause(): void {
    if (this.done || this.timer === undefined) return
    clearTimeout(this.timer)
    this.timer = undefined
    this.left = Math.max(0, this.dueAt - performance.now())
  }

  resume(): void {
    if (this.done || this.left === undefined) return
    const ms = this.left
    this.left = undefined
    this.dueAt = performance.now() + ms
    this.arm(ms)
  }

  cancel(): void {
    this.done = true
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => {
      this.done = true
      this.timer = undefined
      this.fire()
    }, ms)
  }
}
