import { closeSync, fsync, fsyncSync, openSync } from 'node:fs'

// Group commit for the WAL. A write made with synchronous=NORMAL is in the OS the moment its
// transaction commits (a killed process loses nothing); what it lacks is the fsync that makes it
// survive a power cut. Every caller that must acknowledge something durably awaits sync(): one
// fsync of the WAL covers every commit made before it started, so blocks finishing together
// (across sessions) share one fsync instead of paying one each.
//
// When the fsync runs: at the end of the event-loop turn in which the first waiter arrived
// (setImmediate), so every commit of that turn rides on it. How it runs: inline on the
// event loop while the disk answers fast, through libuv's thread pool when it does not. The
// pool costs two wake-ups that cross threads (handing the job to a pool thread, and the
// completion back to the loop); on these 2-vCPU VMs each one is ~40 us, as much as the fsync
// itself (~90 us), and submitting alone was ~3% of a block's CPU. Inline, a slow disk would
// stall every other request for as long as it takes, so an average (EWMA) of recent fsyncs
// above inlineMaxUs sends them to the pool until the disk is fast again.
export type GroupCommitOptions = {
  // Inline fsyncs while their recent average stays below this (0: always the pool).
  inlineMaxUs?: number
}

export const DEFAULT_INLINE_MAX_US = 1000

type Group = { promise: Promise<void>; resolve: () => void; reject: (e: unknown) => void }

function group(): Group {
  let resolve!: () => void
  let reject!: (e: unknown) => void
  const promise = new Promise<void>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

export class GroupCommit {
  private fd: number | undefined
  // Waiters whose fsync has not started yet: all of them ride on the next one.
  private waiting: Group | undefined
  private running = false
  private scheduled = false
  private avgUs = 0
  private readonly inlineMaxUs: number
  // How many fsyncs ran, and how (for tests and the benchmark).
  readonly stats = { inline: 0, pooled: 0 }

  constructor(
    private readonly walPath: string,
    options: GroupCommitOptions = {},
  ) {
    this.inlineMaxUs = options.inlineMaxUs ?? DEFAULT_INLINE_MAX_US
  }

  sync(): Promise<void> {
    this.waiting ??= group()
    const promise = this.waiting.promise
    this.schedule()
    return promise
  }

  // Waiters still queued get their fsync; the descriptor goes once nothing uses it.
  close(): void {
    this.closed = true
    this.release()
  }

  private closed = false

  private release(): void {
    if (!this.closed || this.running || this.fd === undefined) return
    closeSync(this.fd)
    this.fd = undefined
  }

  private schedule(): void {
    if (this.running || this.scheduled || this.waiting === undefined) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      this.start()
    })
  }

  // Takes every waiter so far and fsyncs for them; waiters arriving from now on get the next.
  private start(): void {
    const g = this.waiting
    if (g === undefined || this.running) return
    this.waiting = undefined
    let fd: number
    try {
      fd = this.fd ??= openSync(this.walPath, 'r')
    } catch (err) {
      // No WAL yet: nothing was written, so nothing waits for the disk.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') g.resolve()
      else g.reject(err)
      this.schedule()
      return
    }
    const t0 = performance.now()
    if (this.avgUs < this.inlineMaxUs) {
      this.stats.inline++
      try {
        fsyncSync(fd)
        this.done(g, t0)
      } catch (err) {
        this.done(g, t0, err)
      }
      return
    }
    this.stats.pooled++
    this.running = true
    fsync(fd, (err) => {
      this.running = false
      this.done(g, t0, err ?? undefined)
    })
  }

  private done(g: Group, t0: number, err?: unknown): void {
    const us = (performance.now() - t0) * 1000
    this.avgUs = this.avgUs === 0 ? us : 0.8 * this.avgUs + 0.2 * us
    if (err) g.reject(err)
    else g.resolve()
    this.schedule()
    if (this.waiting === undefined) this.release()
  }
}
