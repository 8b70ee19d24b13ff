import { VisError } from '../util/errors.js'
import { TreeUsage, type Usage } from './disk-usage.js'

const MIB = 1024 * 1024
// While a block runs, the roots are measured again this long after the last pass ended (or
// four times as long as that pass took, for big trees: the walk never takes more than a fifth
// of a core).
export const DISK_CHECK_MS = 250
const PASS_SHARE = 4
// A host call starts a pass when none ran for this long (calls in a tight loop share one).
const CALL_GAP_MS = 50

export type DiskState = {
  // Allocated bytes the roots gained since the session started (negative: freed).
  growth: number
  over: boolean
  usage: Usage
}

export type DiskBudgetHooks = {
  // What to measure now: the roots as the host sees them (a draft's upper directory stands
  // for its root) and the worker's outbox.
  paths: () => string[]
  // Past the budget for the first time, or still growing past it (something wrote through
  // a descriptor opened earlier, native code or a tool process).
  exceeded: (why: string, s: DiskState) => void
  // Back under it (files deleted).
  recovered: (s: DiskState) => void
}

function mib(bytes: number): string {
  return `${(bytes / MIB).toFixed(1)} MiB`
}

// A session's write budget (issue 30 section 7): how much its roots may grow, in allocated
// blocks, over what they held when the session started. It is a measurement, not a quota:
// nothing stops a write in flight, so what passes between two passes gets through (see
// SECURITY.md); past the budget the session interrupts the block and refuses further writes
// until files are deleted.
export class DiskBudget {
  readonly bytes: number
  private readonly usage = new TreeUsage()
  private baseline: Promise<number> | undefined
  private running: Promise<DiskState> | undefined
  private lastEnd = 0
  private lastMs = 0
  private over = false
  private overGrowth = 0
  state: DiskState | undefined

  constructor(
    readonly budgetMb: number,
    private readonly sessionId: string,
    private readonly hooks: DiskBudgetHooks,
  ) {
    this.bytes = budgetMb * MIB
  }

  // What the roots hold at the session's start; every later pass is compared with it.
  start(): Promise<number> {
    this.baseline ??= this.usage.measure(this.hooks.paths()).then((u) => {
      this.lastMs = u.ms
      return u.allocated
    })
    return this.baseline
  }

  get exceeded(): boolean {
    return this.over
  }

  // Measures now, or joins the pass under way.
  check(): Promise<DiskState> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined
      this.lastEnd = performance.now()
    })
    return this.running
  }

  // A host call is a check point; a burst of calls shares one pass.
  poke(): void {
    if (this.running === undefined && performance.now() - this.lastEnd >= CALL_GAP_MS) void this.check()
  }

  // Passes one after another while a block runs; the returned function stops them.
  watch(): () => void {
    let timer: NodeJS.Timeout | undefined
    let stopped = false
    const next = () => {
      if (stopped) return
      timer = setTimeout(
        () => {
          void this.check().finally(next)
        },
        Math.max(DISK_CHECK_MS, this.lastMs * PASS_SHARE),
      )
    }
    next()
    return () => {
      stopped = true
      clearTimeout(timer)
    }
  }

  // Refuses a host tool that writes into the roots while the session is past its budget.
  async assertWritable(op: string): Promise<void> {
    const s = await this.check()
    if (s.over)
      throw new VisError('session.disk-budget', this.refusal(s), {
        sessionId: this.sessionId,
        op,
      })
  }

  // Why writes are refused, for the model: the budget, what was written, what to do.
  refusal(s: DiskState): string {
    return `the session is past its disk budget: its roots grew by ${mib(s.growth)} since it started, over the budget of ${this.budgetMb} MiB (limits.diskBudgetMb); writes are refused until files are deleted to bring it back under`
  }

  private async pass(): Promise<DiskState> {
    const base = await this.start()
    const usage = await this.usage.measure(this.hooks.paths())
    this.lastMs = usage.ms
    const growth = usage.allocated - base
    const s: DiskState = { growth, over: growth > this.bytes, usage }
    this.state = s
    if (s.over) {
      // Growth while refused means a write got past the refusal: interrupt again.
      if (!this.over || growth > this.overGrowth) this.hooks.exceeded(this.refusal(s), s)
      this.over = true
      this.overGrowth = growth
    } else if (this.over) {
      this.over = false
      this.overGrowth = 0
      this.hooks.recovered(s)
    }
    return s
  }
}
