import { appendLog, logDir } from './logfile.js'
import { Worker, type WorkerOptions } from './worker.js'
import { policyKey, type WorkerPolicy } from './worker-policy.js'

export type PoolOptions = Omit<WorkerOptions, 'policy'> & {
  // Warm workers kept ready per policy key; 0 turns the pool off.
  size: number
  // How many distinct policies are kept warm; the least recently used one is dropped.
  maxKeys?: number
  // Runs on every new worker before it is handed out (installs the default tools).
  prepare?: (worker: Worker) => Promise<void>
}

type Slot = { policy: WorkerPolicy; idle: Worker[]; starting: number; lastUsed: number; failures: number }

// Workers started and initialised ahead of demand, keyed by everything fixed at spawn.
// A worker handed out never comes back: disposal kills it and the pool starts a fresh one.
export class WarmPool {
  private readonly slots = new Map<string, Slot>()
  private readonly startingAll = new Set<Promise<unknown>>()
  private closed = false

  constructor(private readonly opts: PoolOptions) {}

  // Takes a warm worker for this policy, or starts one cold. The slot is refilled once
  // the caller is done with its own setup (prewarm), so refill work never delays it.
  async acquire(policy: WorkerPolicy): Promise<{ worker: Worker; warm: boolean }> {
    const key = policyKey(policy, this.opts.python)
    const slot = this.slot(key, policy)
    slot.lastUsed = Date.now()
    let worker = slot.idle.shift()
    while (worker && !worker.alive) worker = slot.idle.shift()
    if (worker) return { worker, warm: true }
    return { worker: await this.startWorker(policy), warm: false }
  }

  // Starts warming a policy before anyone asks for it.
  prewarm(policy: WorkerPolicy): void {
    const key = policyKey(policy, this.opts.python)
    this.slot(key, policy).lastUsed = Date.now()
    this.refill(key)
  }

  pids(): number[] {
    return [...this.slots.values()].flatMap((s) => s.idle.map((w) => w.pid))
  }

  idleCount(policy: WorkerPolicy): number {
    return this.slots.get(policyKey(policy, this.opts.python))?.idle.length ?? 0
  }

  // Resolves when no worker is being started (tests and benchmarks wait on refills).
  async settled(): Promise<void> {
    while (this.startingAll.size > 0) await Promise.allSettled([...this.startingAll])
  }

  async close(): Promise<void> {
    this.closed = true
    await this.settled()
    const all = [...this.slots.values()].flatMap((s) => s.idle)
    this.slots.clear()
    await Promise.allSettled(all.map((w) => w.close()))
  }

  private slot(key: string, policy: WorkerPolicy): Slot {
    let slot = this.slots.get(key)
    if (!slot) {
      slot = { policy, idle: [], starting: 0, lastUsed: Date.now(), failures: 0 }
      this.slots.set(key, slot)
      this.evict()
    }
    return slot
  }

  private evict(): void {
    const max = this.opts.maxKeys ?? 4
    while (this.slots.size > max) {
      let oldest: [string, Slot] | undefined
      for (const e of this.slots) if (!oldest || e[1].lastUsed < oldest[1].lastUsed) oldest = e
      if (!oldest) return
      this.slots.delete(oldest[0])
      for (const w of oldest[1].idle) void w.close()
    }
  }

  private refill(key: string): void {
    const slot = this.slots.get(key)
    // Repeated start failures stop the refill: acquire still starts cold and reports why.
    if (!slot || this.closed || slot.failures >= 3) return
    while (slot.idle.length + slot.starting < this.opts.size) {
      slot.starting++
      const p = this.startWorker(slot.policy).then(
        (w) => {
          slot.starting--
          slot.failures = 0
          if (this.closed || this.slots.get(key) !== slot) {
            void w.close()
            return
          }
          slot.idle.push(w)
          w.on('exit', () => {
            const i = slot.idle.indexOf(w)
            if (i >= 0) slot.idle.splice(i, 1)
          })
        },
        (err) => {
          slot.starting--
          slot.failures++
          appendLog(`${logDir(this.opts.home)}/pool.log`, `warm worker failed to start: ${String(err)}`)
        },
      )
      this.startingAll.add(p)
      void p.finally(() => this.startingAll.delete(p))
    }
  }

  private async startWorker(policy: WorkerPolicy): Promise<Worker> {
    const { size: _s, maxKeys: _k, prepare, ...rest } = this.opts
    const worker = await Worker.start({ ...rest, policy, runtimeConfig: { ...rest.runtimeConfig, policy } })
    try {
      await prepare?.(worker)
    } catch (err) {
      await worker.close()
      throw err
    }
    return worker
  }
}
