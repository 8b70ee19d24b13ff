import { VisError } from '../../util/errors.js'

// What resource reads may hold at once, server-wide (seventeenth outsider pass). A
// `resources/read` builds its whole answer (an attachment's file and base64, a transcript page's
// rows and Markdown, then the SDK's JSON-RPC text and its bytes) before the event stream's bound
// (`boundedStream`, src/http/answer-budget.ts) sees any of it, and a POST's batch of up to 100
// requests runs every handler before one answer is written: 24 reads of one 30 MiB attachment in
// a 4 KB POST raised the server's peak memory by 2 GB, and (eighteenth pass) 100 reads of one
// ~4 MiB transcript page by ~400 MiB, transcripts having been left out of the gate. So every
// read, whatever its kind, reserves what it will build (resources.ts `readResource`: one path)
// before it builds, and gives it back once its answer has been handed to the transport
// (server.ts); a read that does not fit waits its turn, in order, and past what may wait it is
// refused (mcp.resource-busy, retryable). The gate is one for the process: POSTs of every MCP
// session, and the stdio server, share it.

// Reserved by the reads running at once. A read bigger than this still runs when nothing else is
// reserved (one at the largest an answer may be, resources.ts, comes to ~100 MiB), so every read
// an answer can carry is possible.
export const READ_RESERVED_BYTES = 96 * 2 ** 20
// What the reads waiting for room may come to; past it a read is refused rather than queued, so a
// batch of large reads is not all done one after another for a client whose stream is long gone.
export const READ_WAITING_BYTES = 512 * 2 ** 20

type Waiter = { cost: number; admit: () => void; refuse: (err: unknown) => void }

export class ReadGate {
  private held = 0
  private waitingCost = 0
  private readonly waiting: Waiter[] = []

  constructor(
    readonly bound = READ_RESERVED_BYTES,
    readonly waitBound = READ_WAITING_BYTES,
  ) {}

  // Bytes reserved now (for tests and the docs).
  get reserved(): number {
    return this.held
  }

  // Bytes the waiting reads would reserve (for tests: a read is seen queued, not guessed by time).
  get waitingBytes(): number {
    return this.waitingCost
  }

  // Reserves `cost` bytes, waiting for room; resolves to the function that gives them back (once,
  // whenever called again). A request cancelled while it waits is refused and leaves the queue.
  async take(cost: number, signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) throw cancelled()
    if (this.waiting.length === 0 && this.fits(cost)) return this.grant(cost)
    if (this.waitingCost + cost > this.waitBound) {
      throw new VisError(
        'mcp.resource-busy',
        `The server is reading as many resources as it holds at once (${mib(this.bound)} MiB reserved, ` +
          `${mib(this.waitBound)} MiB waiting); read this one again later, or fewer at a time.`,
        { reservedBytes: this.held, waitingBytes: this.waitingCost },
      )
    }
    return new Promise<() => void>((resolve, reject) => {
      const onAbort = () => {
        const i = this.waiting.indexOf(w)
        if (i < 0) return
        this.waiting.splice(i, 1)
        this.waitingCost -= cost
        reject(cancelled())
        // The queue's head may fit now that this one left it.
        this.admit()
      }
      const w: Waiter = {
        cost,
        admit: () => {
          signal?.removeEventListener('abort', onAbort)
          resolve(this.grant(cost))
        },
        refuse: reject,
      }
      this.waiting.push(w)
      this.waitingCost += cost
      signal?.addEventListener('abort', onAbort, { once: true })
    })
  }

  private fits(cost: number): boolean {
    return this.held === 0 || this.held + cost <= this.bound
  }

  private grant(cost: number): () => void {
    this.held += cost
    let given = false
    return () => {
      if (given) return
      given = true
      this.held -= cost
      this.admit()
    }
  }

  // Lets in the waiting reads that fit, first come first.
  private admit(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.cost)) {
      const w = this.waiting.shift()!
      this.waitingCost -= w.cost
      w.admit()
    }
  }
}

const mib = (n: number) => Math.round(n / 2 ** 20)
const cancelled = () =>
  new VisError('mcp.resource-busy', 'The read was cancelled while it waited for room.', { cancelled: true })

// The one gate of this process, for every kind of resource.
export const resourceReads = new ReadGate()
