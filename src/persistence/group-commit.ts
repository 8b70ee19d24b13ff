import { closeSync, fsync, openSync } from 'node:fs'

// Group commit for the WAL. A write made with synchronous=NORMAL is in the OS the moment its
// transaction commits (a killed process loses nothing); what it lacks is the fsync that makes it
// survive a power cut. Every caller that must acknowledge something durably awaits sync(): one
// fsync of the WAL, off the event loop, covers every commit made before it started, so blocks
// finishing together (across sessions) share one fsync instead of paying one each, and the
// event loop keeps serving while the disk works.
export class GroupCommit {
  private fd: number | undefined
  private inFlight: Promise<void> | undefined
  // Waiters that arrived while an fsync was running: their commits may postdate its start, so
  // they get the next one.
  private next: { promise: Promise<void>; resolve: () => void; reject: (e: unknown) => void } | undefined

  constructor(private readonly walPath: string) {}

  sync(): Promise<void> {
    if (this.inFlight === undefined) {
      this.inFlight = this.run()
      return this.inFlight
    }
    if (this.next === undefined) {
      let resolve!: () => void
      let reject!: (e: unknown) => void
      const promise = new Promise<void>((res, rej) => {
        resolve = res
        reject = rej
      })
      this.next = { promise, resolve, reject }
    }
    return this.next.promise
  }

  close(): void {
    const fd = this.fd
    this.fd = undefined
    if (fd === undefined) return
    // An fsync still running keeps its descriptor until it is done.
    if (this.inFlight) this.inFlight.finally(() => closeSync(fd)).catch(() => undefined)
    else closeSync(fd)
  }

  private run(): Promise<void> {
    try {
      this.fd ??= openSync(this.walPath, 'r')
    } catch (err) {
      // No WAL yet: nothing was written, so nothing waits for the disk.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return Promise.resolve()
      return Promise.reject(err)
    }
    const fd = this.fd
    return new Promise<void>((resolve, reject) => {
      fsync(fd, (err) => {
        const waiting = this.next
        this.next = undefined
        this.inFlight = undefined
        if (waiting) {
          this.inFlight = this.run()
          this.inFlight.then(waiting.resolve, waiting.reject)
        }
        if (err) reject(err)
        else resolve()
      })
    })
  }
}
