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
}

// The hard bound on one block. At its timeout (or on an interrupt request) the block is
// interrupted; if it has not ended `graceMs` later, the worker is killed. A guest can ignore
// SIGINT, swallow KeyboardInterrupt or sit in one long C call, but it cannot outlive the kill.
export class BlockDeadline {
  // Why the block was told to stop, once it was.
  cause: Cause | undefined
  // Set once the worker was killed (by this deadline, or by the worker itself retiring while
  // the block was being stopped): the session replaces the worker instead of retiring.
  killed: string | undefined
  private timers: NodeJS.Timeout[] = []

  constructor(
    private readonly hooks: DeadlineHooks,
    private readonly opts: DeadlineOptions,
  ) {
    if (opts.timeoutMs !== undefined) {
      this.timers.push(setTimeout(() => void this.stop('timeout'), opts.timeoutMs))
    }
    this.timers.push(
      setTimeout(() => {
        this.cause ??= 'wall-clock'
        this.kill(`the block ran past the wall clock limit of ${opts.wallClockMs} ms`)
      }, opts.wallClockMs),
    )
  }

  // Interrupts the block and arms the kill. A second request re-sends the interrupt only.
  stop(cause: Cause): Promise<unknown> {
    if (this.cause === undefined) {
      this.cause = cause
      const grace = this.opts.graceMs
      this.timers.push(
        setTimeout(
          () => this.kill(`it did not stop within ${grace} ms of being interrupted (${this.describe()})`),
          grace,
        ),
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
    for (const t of this.timers) clearTimeout(t)
    this.timers = []
  }

  private describe(): string {
    if (this.cause === 'timeout') return `its timeout was ${this.opts.timeoutMs} ms`
    if (this.cause === 'wall-clock') return `the wall clock limit is ${this.opts.wallClockMs} ms`
    return 'interrupted on request'
  }
}
