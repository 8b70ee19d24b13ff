// A fixed number of slots for work the host does on the sandbox's behalf outside every jail
// (patch's Python syntax checker). Each such process is bounded on its own; the slots bound how
// many run at once across all sessions, so the host's total is the per-process bound times the
// slots, whatever the number of sessions and concurrent host calls. Waiting is bounded too, in
// length and in time: past either, the caller gets `busy` instead of its work.
type Waiter = { start: () => void; timer: NodeJS.Timeout }

export class Slots {
  private active = 0
  private readonly waiting: Waiter[] = []

  constructor(
    readonly size: number,
    readonly maxWaiting: number,
    readonly maxWaitMs: number,
  ) {}

  get running(): number {
    return this.active
  }

  get queued(): number {
    return this.waiting.length
  }

  // busy('full'): maxWaiting callers were already waiting; busy('timeout'): no slot came free
  // within maxWaitMs.
  async run<T>(work: () => Promise<T>, busy: (why: 'full' | 'timeout') => T): Promise<T> {
    if (this.active >= this.size) {
      if (this.waiting.length >= this.maxWaiting) return busy('full')
      const got = await new Promise<boolean>((resolve) => {
        const w: Waiter = {
          start: () => resolve(true),
          timer: setTimeout(() => {
            this.waiting.splice(this.waiting.indexOf(w), 1)
            resolve(false)
          }, this.maxWaitMs),
        }
        this.waiting.push(w)
      })
      if (!got) return busy('timeout')
    } else this.active++
    try {
      return await work()
    } finally {
      // The slot passes straight to the next waiter, so `active` counts it throughout.
      const next = this.waiting.shift()
      if (next) {
        clearTimeout(next.timer)
        next.start()
      } else this.active--
    }
  }
}
