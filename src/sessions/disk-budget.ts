import { statfsSync, statSync } from 'node:fs'
import { VisError } from '../util/errors.js'
import { TreeUsage, type Usage } from './disk-usage.js'

const MIB = 1024 * 1024
// While a block runs, the budget is checked this often.
export const DISK_CHECK_MS = 250
// Between blocks too (as often: a thread a block left behind may still write).
export const DISK_IDLE_CHECK_MS = 250
// A full walk of the roots runs at least this often while blocks run (or ten times as long
// as the last walk took, so walking never takes more than a tenth of a core); in between,
// the filesystems' own counters say whether one is needed (see mayBeOver).
const FULL_EVERY_MS = 2000
const PASS_SHARE = 10
// A host call checks when none did for this long (calls in a tight loop share one).
const CALL_GAP_MS = 50
// Roots this small are walked at every check: a few lstat calls, and exact whatever other
// processes do to the filesystem meanwhile.
const SMALL_TREE_ENTRIES = 256

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

// Bytes in use on the filesystems holding `paths`, each filesystem once (`devs` remembers
// which filesystem a path is on, so a check costs one statfs per filesystem).
function filesystemsUsed(paths: readonly string[], devs: Map<string, number>): number {
  const seen = new Set<number>()
  let used = 0
  for (const p of paths) {
    try {
      let dev = devs.get(p)
      if (dev === undefined) {
        dev = statSync(p).dev
        devs.set(p, dev)
      }
      if (seen.has(dev)) continue
      seen.add(dev)
      const fs = statfsSync(p)
      used += (fs.blocks - fs.bfree) * fs.bsize
    } catch {
      // A path that is gone holds nothing.
      devs.delete(p)
    }
  }
  return used
}

// A session's write budget (issue 30 section 7): how much its roots may grow, in allocated
// blocks, over what they held when the session started. It is a measurement, not a quota:
// nothing stops a write in flight, so what lands between two checks gets through (see
// SECURITY.md); past the budget the session interrupts the block and refuses further writes
// until files are deleted.
//
// A full walk costs one lstat per entry of the roots, too much for every block end of a big
// workspace. So each check first reads the filesystems' used space (statfs): while it has grown
// less since the last walk than the room that walk left under the budget, the roots cannot
// have grown more (their blocks are on those filesystems), and no walk is needed. Writes by
// other processes only make walks more frequent; space others free at the same time can hide
// the session's growth from this test until the next periodic walk (FULL_EVERY_MS).
export class DiskBudget {
  readonly bytes: number
  private readonly usage = new TreeUsage()
  private baseline: Promise<number> | undefined
  private running: Promise<DiskState> | undefined
  private lastEnd = Number.NEGATIVE_INFINITY
  private lastMs = 0
  private lastEntries = 0
  private lastPoke = Number.NEGATIVE_INFINITY
  // The filesystems' used bytes when the last walk started, and the growth it found.
  private fsAtWalk = 0
  private readonly devs = new Map<string, number>()
  private growthAtWalk = 0
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

  // What the roots hold at the session's start; every later walk is compared with it.
  start(): Promise<number> {
    this.baseline ??= (async () => {
      const paths = this.hooks.paths()
      this.fsAtWalk = filesystemsUsed(paths, this.devs)
      const u = await this.usage.measure(paths)
      this.lastMs = u.ms
      this.lastEntries = u.entries
      this.lastEnd = performance.now()
      return u.allocated
    })()
    return this.baseline
  }

  get exceeded(): boolean {
    return this.over
  }

  // Walks the roots now, or joins the walk under way.
  check(): Promise<DiskState> {
    this.running ??= this.walk().finally(() => {
      this.running = undefined
      this.lastEnd = performance.now()
    })
    return this.running
  }

  // The check at a block's end, on a timer while it runs, before a host tool writes: a walk
  // when the roots may be past the budget (or are), else only when the last walk is stale
  // (then not waited for). On the timer (`periodic`), walks past the budget are spaced by ten
  // times their length, so a big tree past its budget does not keep a core walking.
  async settle(periodic = false): Promise<void> {
    await this.start()
    const since = performance.now() - this.lastEnd
    const spaced = periodic && this.over && since < this.lastMs * PASS_SHARE
    const small = this.lastEntries <= SMALL_TREE_ENTRIES
    if (this.running !== undefined || (!spaced && (small || this.mayBeOver()))) {
      await this.check()
      return
    }
    if (since >= Math.max(FULL_EVERY_MS, this.lastMs * PASS_SHARE)) void this.check()
  }

  // A host call is a check point; a burst of calls shares one.
  poke(): void {
    const now = performance.now()
    if (now - this.lastPoke < CALL_GAP_MS) return
    this.lastPoke = now
    void this.settle()
  }

  // Checks one after another (while a block runs, or between blocks); the returned
  // function stops them. The timer does not keep the process alive.
  watch(everyMs = DISK_CHECK_MS): () => void {
    let timer: NodeJS.Timeout | undefined
    let stopped = false
    const next = () => {
      if (stopped) return
      timer = setTimeout(
        () =>
          void this.settle(true)
            .catch(() => undefined)
            .finally(next),
        everyMs,
      )
      timer.unref()
    }
    next()
    return () => {
      stopped = true
      clearTimeout(timer)
    }
  }

  // Refuses a host tool that writes into the roots while the session is past its budget.
  async assertWritable(op: string): Promise<void> {
    await this.settle()
    const s = this.state
    if (this.over && s !== undefined)
      throw new VisError('session.disk-budget', this.refusal(s), { sessionId: this.sessionId, op })
  }

  // Why writes are refused, for the model: the budget, what was written, what to do.
  refusal(s: DiskState): string {
    if (s.usage.unreadable > 0)
      return `the session's roots hold ${s.usage.unreadable} director${s.usage.unreadable === 1 ? 'y' : 'ies'} the host cannot list or look into (not the host user's, or changed while the host read it), so what they hold cannot be measured against the disk budget of ${this.budgetMb} MiB (limits.diskBudgetMb) and counts as over it; writes are refused until such directories are made readable by their owner (chmod u+rx) or deleted`
    return `the session is past its disk budget: its roots grew by ${mib(s.growth)} since it started, over the budget of ${this.budgetMb} MiB (limits.diskBudgetMb); writes are refused until files are deleted to bring it back under`
  }

  // Whether a walk is needed: the session is past the budget (only a walk sees it come back
  // under), or the filesystems grew by more than the room the last walk left.
  private mayBeOver(): boolean {
    if (this.over) return true
    const grew = filesystemsUsed(this.hooks.paths(), this.devs) - this.fsAtWalk
    return this.growthAtWalk + grew > this.bytes
  }

  private async walk(): Promise<DiskState> {
    const base = await this.start()
    const paths = this.hooks.paths()
    // Read before walking: what is written during the walk shows in the next comparison. A
    // walk also learns again which filesystem each path is on (a root may have been replaced).
    this.devs.clear()
    const fsBefore = filesystemsUsed(paths, this.devs)
    const usage = await this.usage.measure(paths)
    this.lastMs = usage.ms
    this.lastEntries = usage.entries
    const growth = usage.allocated - base
    this.fsAtWalk = fsBefore
    this.growthAtWalk = growth
    // A directory the walk could not read hides an unknown amount: over (fail closed).
    const s: DiskState = { growth, over: growth > this.bytes || usage.unreadable > 0, usage }
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
