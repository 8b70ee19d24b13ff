import { type Limits, LimitsSchema } from '../contracts/jail-policy.js'
import type { NetworkEntryInput } from '../contracts/network-policy.js'
import type { OutputNotification } from '../protocol/messages.js'
import { type NetworkAck, parseReply, type StdinAck } from '../protocol/parent-requests.js'
import { parseGuestOutcome, type RunBlockRequest } from '../protocol/run-block.js'
import { SessionResources } from '../tools/resources.js'
import type { SpawnHook, Tool } from '../tools/types.js'
import { VisError } from '../util/errors.js'
import { processTree } from '../worker/proctree.js'
import type { Worker } from '../worker/worker.js'
import { type BindOptions, SessionBindings } from './bindings.js'
import { type BlockResult, type HostBlockOutcome, toBlockResult } from './block-result.js'
import { assertCrossable } from './crossing.js'
import { BlockDeadline, DEFAULT_GRACE_MS } from './deadline.js'
import { DISK_IDLE_CHECK_MS, DiskBudget } from './disk-budget.js'
import {
  type SessionEvent,
  type SessionEventAlias,
  type SessionEventOf,
  SessionEvents,
  type SessionEventType,
} from './events.js'
import { OutputBudget } from './output-cap.js'
import { GUEST_API, WorkerSetup } from './replace.js'
import { diskBudgetError, finishStopped, guestCwd, guestNames, killedOutcome } from './stopped.js'
import { type RestoreReport, type Survived, survivedReplacement } from './survived.js'
import { type BoundTool, type ToolGate, ToolTable } from './tool-table.js'
import { capOutcomeValues } from './value-cap.js'

// How long, and how often, an interrupt that reached the worker before its block started is
// sent again (Session.interruptWorker).
const EARLY_RETRY_MS = 250
const EARLY_RETRY_STEP_MS = 2

export type { BindOptions }
export { GUEST_API }
export type RunBlockOptions = {
  // Interrupt the block after this long; the outcome then says `timedOut`.
  timeoutMs?: number
  // false: refuse at once when another block is running instead of queueing.
  wait?: boolean
  // The host's current context, rebound as `session` in the guest before the block
  // (default: the one bound with bindContext).
  context?: Record<string, unknown>
  // The block's whole sys.stdin (end of input after it); writeStdin feeds it piecewise.
  stdin?: string
}
export type SessionState = 'ready' | 'retired' | 'disposed'

export type SessionInit = {
  id: string
  worker: Worker
  roots: string[]
  maxConcurrentHostCalls?: number
  onDispose?: (s: Session) => void | Promise<void>
  // After the worker acknowledged a tighter network: the session's other egress (tools).
  onNetwork?: (net: NetworkAck) => void
  // How the session's tools start processes (its jail); unset, they run on the host.
  spawn?: SpawnHook
  // A fresh worker with the session's spawn policy, for when a block that would not stop
  // got its worker killed.
  respawn: () => Promise<Worker>
  // Between interrupting a block and killing its worker (at most 2 s).
  graceMs?: number
}

// One sandbox: a worker process with one interpreter whose globals persist across
// blocks, the host tools bound into it, and the events it emits.
export class Session {
  readonly id: string
  readonly roots: string[]
  readonly resources = new SessionResources()
  readonly events = new SessionEvents()
  state: SessionState = 'ready'
  retiredReason: string | undefined
  private worker: Worker
  private readonly tools: ToolTable
  private readonly bindings: SessionBindings
  // Unhooks this session's listeners from its current worker.
  private workerHooks: Array<() => void> = []
  private readonly respawn: () => Promise<Worker>
  private readonly graceMs: number
  private readonly setup = new WorkerSetup()
  // Settles once a worker replacement under way is done (calls wait for the fresh worker).
  private replacing: Promise<void> | undefined
  // The session's own names after the last block that finished (what a kill can lose).
  private lastNames: string[] = []
  // The report the next block's `session['survived']` carries.
  private pendingSurvived: Survived | undefined

  // The names after the last block that finished: a cluster node keeps them, so that the node
  // taking the session over can say which plain values were lost (src/cluster).
  get names(): readonly string[] {
    return this.lastNames
  }

  // What a takeover left (src/cluster): the next block reads it as session['survived'].
  noteSurvived(survived: Survived): void {
    this.pendingSurvived = survived
  }
  private spawnHook: SpawnHook | undefined
  private tail: Promise<unknown> = Promise.resolve()
  private queued = 0
  private blockSeq = 0
  private current:
    | {
        job: number
        block: number
        deadline: BlockDeadline
        // Set when the session went past its disk budget during this block: why.
        diskMessage?: string
        // The block has answered: a budget found exceeded now is reported, not interrupted.
        ended?: boolean
      }
    | undefined
  // How much the roots may grow (limits.diskBudgetMb); `diskRefusal` is why writes are
  // refused while the session is past it (told again to a replacement worker).
  readonly disk: DiskBudget
  private diskRefusal: string | undefined
  // The worker's answer to the last refusal change: a block starts only once it is applied
  // (control ops reach the worker's JavaScript thread, blocks go straight to the interpreter).
  private diskTold: Promise<unknown> = Promise.resolve()
  // The running block's stdout so far, and how much of it takePartialStdout has handed out.
  private blockOut = ''
  private taken = 0
  // The host's own cap on what a block may print: the guest runtime caps too, but
  // guest code can bypass it, and the worker must never grow the host's memory.
  private budget: OutputBudget
  readonly limits: Limits
  private readonly unhook: Array<() => void> = []
  private context: Record<string, unknown> | undefined
  private readonly onDispose?: (s: Session) => void | Promise<void>
  private readonly onNetwork?: (net: NetworkAck) => void
  generation = 0
  private idleUnwatch: (() => void) | undefined
  // The guest's snapshot of the session's own definitions after the last block.
  lastSnapshot: unknown

  constructor(init: SessionInit) {
    this.id = init.id
    this.worker = init.worker
    this.roots = init.roots
    this.onDispose = init.onDispose
    this.onNetwork = init.onNetwork
    this.limits = LimitsSchema.parse(init.worker.policy.limits ?? {})
    this.budget = new OutputBudget(this.limits.outputBytes)
    this.tools = new ToolTable(init.id, init.maxConcurrentHostCalls, (capMs?: number) => {
      const deadline = this.current?.deadline
      return deadline ? deadline.hold(capMs) : () => {}
    })
    this.disk = new DiskBudget(this.limits.diskBudgetMb, init.id, {
      paths: () => this.diskPaths(),
      exceeded: (why) => this.onDiskExceeded(why),
      recovered: () => this.tellDisk(undefined),
    })
    // What the roots hold now is the baseline; the first block waits for it.
    void this.disk.start()
    this.watchIdle()
    this.unhook.push(() => this.idleUnwatch?.())
    this.tools.beforeWrite = (op) => this.disk.assertWritable(op)
    this.bindings = new SessionBindings(init.id, this.tools, {
      install: (spec) => this.installTool(spec),
      remove: (name) => this.callGuest('remove_tool', name),
      takePreinstalled: (name) => {
        const spec = this.worker.preinstalled.get(name)
        this.worker.preinstalled.delete(name)
        return spec
      },
    })
    this.respawn = init.respawn
    this.graceMs = init.graceMs ?? DEFAULT_GRACE_MS
    this.spawnHook = init.spawn
    this.attach(init.worker)
    this.unhook.push(() => this.detach())
  }

  private attach(worker: Worker): void {
    this.worker = worker
    // A fresh worker past the budget refuses writes like the one it replaces.
    if (this.diskRefusal !== undefined) this.tellDisk(this.diskRefusal)
    worker.setHostHandler((call) => {
      // Every host call is a check point of the disk budget (a burst shares one pass).
      this.disk.poke()
      return this.tools.dispatch(call, {
        sessionId: this.id,
        roots: this.roots,
        resources: this.resources,
        spawn: this.spawnHook,
      })
    })
    this.workerHooks = [
      worker.on('output', (ev) => this.onOutput(ev)),
      worker.on('retired', ({ reason }) => {
        // Killed while its block was being stopped: the block's deadline replaces the worker.
        if (this.current?.deadline.adopt(reason)) return
        this.markRetired(reason)
      }),
      // Only guest code writing on the socket itself sends such frames: the worker has
      // shown it runs hostile native-level code, and its wire can no longer be trusted.
      worker.on('violation', ({ what }) => worker.retire(`it sent ${what} on its wire (protocol violation)`)),
      worker.on('exit', ({ state, code, signal, reason }) => {
        if (state === 'ready' || state === 'starting') {
          this.markRetired(
            reason ?? (signal ? `the worker was killed by ${signal}` : `the worker exited with code ${code}`),
          )
        }
      }),
    ]
  }

  private detach(): void {
    for (const off of this.workerHooks) off()
    this.workerHooks = []
  }

  get pid(): number {
    return this.worker.pid
  }

  // The running worker's outbox: files a block closes there come back as attachments.
  get outbox(): string {
    return this.worker.outbox
  }

  // What the disk budget measures: the roots as they are on the host's disk (a draft's
  // writes land in its overlay's upper directory, not in the root) and the worker's outbox.
  private diskPaths(): string[] {
    const overlay = this.worker.policy.overlay
    const roots = this.roots.map((r) => (overlay && r === overlay.root ? overlay.upper : r))
    return [...roots, this.worker.outbox]
  }

  // Past the budget (or still growing past it): the guest refuses writes, the running block
  // is interrupted; a block that already answered gets the error on its outcome instead.
  private onDiskExceeded(why: string): void {
    this.tellDisk(why)
    const cur = this.current
    if (cur === undefined) return
    cur.diskMessage = why
    if (!cur.ended) void cur.deadline.stop('disk-budget')
  }

  private tellDisk(why: string | undefined): void {
    this.diskRefusal = why
    const worker = this.worker
    if (worker.state !== 'ready') return
    // A worker that is gone or retiring needs no telling; its replacement is told in attach.
    this.diskTold = worker.call('disk-budget', { refuse: why ?? null }).catch(() => undefined)
  }

  // Directories inside the roots its jail masks (the extension directories).
  get hidden(): string[] {
    return this.worker.policy.hidden ?? []
  }

  // The worker's processes, its root (pid) first; jailed, the helper is the last.
  processTree(): number[] {
    return processTree(this.worker.pid)
  }

  get logPath(): string {
    return this.worker.logPath
  }

  get busy(): boolean {
    return this.queued > 0
  }

  subscribe(fn: (ev: SessionEvent) => void): () => void {
    return this.events.subscribe(fn)
  }

  on<T extends SessionEventType | SessionEventAlias>(
    type: T,
    fn: (ev: SessionEventOf<T>) => void,
  ): () => void {
    return this.events.on(type, fn)
  }

  // Tools, namespaces and data bound into the guest (src/sessions/bindings.ts). Awaiting is
  // optional: the next block waits for the install and reports its failure.
  bind(name: string, fn: (...args: any[]) => unknown, opts: BindOptions = {}): Promise<void> {
    this.assertUsable('bind')
    return this.bindings.bind(name, fn, opts)
  }

  bindTool(tool: BoundTool | Tool): Promise<void> {
    this.assertUsable('bind')
    return this.bindings.bindTool(tool)
  }

  unbind(name: string): Promise<void> {
    this.assertUsable('unbind')
    return this.bindings.unbind(name)
  }

  setData(name: string, value: unknown): Promise<void> {
    this.assertUsable('setData')
    return this.bindings.setData(name, value)
  }

  setBinding(name: string, value: unknown, opts: BindOptions = {}): Promise<void> {
    this.assertUsable(typeof value === 'function' ? 'bind' : 'setData')
    return this.bindings.setBinding(name, value, opts)
  }

  toolNames(): string[] {
    return this.bindings.names()
  }

  toolSpecs(): Array<Pick<BoundTool, 'name' | 'doc' | 'signature' | 'approval'>> {
    return this.bindings.specs()
  }

  setToolGate(gate: ToolGate | undefined): void {
    this.bindings.setGate(gate)
  }

  private async installTool(spec: Record<string, unknown>): Promise<unknown> {
    this.setup.install(spec)
    await this.replacing
    return this.worker.call('install-tool', { spec })
  }

  // Calls one function of the guest runtime's API with one JSON argument.
  async callGuest(fn: string, arg?: unknown): Promise<unknown> {
    // What a fresh worker must be told again after a replacement.
    if (fn === 'install_runtime') this.setup.runtime(arg)
    else if (fn === 'remove_tool') this.setup.remove(String(arg))
    await this.replacing
    return this.worker.call('run', { module: GUEST_API, fn, args: arg === undefined ? [] : [arg] })
  }

  // Low-level ops for benchmarks and diagnostics: they bypass the block queue.
  async exec(code: string): Promise<unknown> {
    this.assertUsable('exec')
    return this.worker.call('exec', { code })
  }

  async eval(expr: string): Promise<unknown> {
    this.assertUsable('eval')
    return this.worker.call('eval', { expr })
  }

  // Binds the host's current context: `session` in the guest is this dict now and
  // before every later block that does not pass its own.
  async bindContext(ctx: Record<string, unknown>): Promise<void> {
    this.assertUsable('bindContext')
    assertCrossable(ctx, 'the session context')
    this.context = ctx
    await this.callGuest('bind_ctx', ctx)
  }

  // Input for the running block's sys.stdin; `eof` ends it (reads then return '').
  async writeStdin(data: string, opts: { eof?: boolean } = {}): Promise<StdinAck> {
    this.assertUsable('stdin')
    const job = this.current?.job
    if (job === undefined) {
      throw new VisError('session.no-block', 'no block is running in this session to read this input', {
        sessionId: this.id,
        op: 'stdin',
      })
    }
    const ack = await this.worker.call('stdin', { job, data, ...(opts.eof ? { eof: true } : {}) })
    return parseReply('stdin', ack)
  }

  // Tightens the session's network for the rest of its life ({ enabled: false }, or a
  // narrower allow list); anything looser is refused with worker.network-loosen.
  async setNetwork(net: { enabled: boolean; allow?: NetworkEntryInput[] }): Promise<NetworkAck> {
    this.assertUsable('network')
    await this.replacing
    const ack = parseReply('network', await this.worker.call('network', net))
    this.setup.tighten(net)
    this.worker.setEgressRules(ack)
    this.onNetwork?.(ack)
    return ack
  }

  // Calls module.fn(*args) in the interpreter; arguments and result cross as JSON.
  async callModule(module: string, fn: string, args: unknown[]): Promise<unknown> {
    this.assertUsable('callModule')
    return this.worker.call('run', { module, fn, args })
  }

  // Runs one block; blocks of one session run one at a time, in call order.
  async runBlock(code: string, opts: RunBlockOptions = {}): Promise<BlockResult> {
    this.assertUsable('runBlock')
    if (opts.wait === false && this.queued > 0) {
      throw new VisError(
        'session.busy',
        'another block is running in this session; wait for it or interrupt it',
        {
          sessionId: this.id,
        },
      )
    }
    this.queued++
    const run = this.tail.then(() => this.runBlockNow(code, opts))
    this.tail = run.catch(() => undefined)
    try {
      return await run
    } finally {
      this.queued--
    }
  }

  private async runBlockNow(code: string, opts: RunBlockOptions): Promise<BlockResult> {
    this.assertUsable('runBlock')
    const pending = this.bindings.takePending()
    if (pending.length > 0) await Promise.all(pending)
    // The roots' size when the session started, measured once; the guest's refusal as it is now.
    await this.disk.start()
    await this.diskTold
    const block = ++this.blockSeq
    const t0 = performance.now()
    this.blockOut = ''
    this.taken = 0
    this.budget = new OutputBudget(this.limits.outputBytes)
    this.events.emit({ type: 'block.started', sessionId: this.id, block, code })
    // The guest runtime truncates at the same cap, with its own marker; the host's
    // OutputBudget holds the line when guest code goes around it.
    const request: RunBlockRequest = { code }
    if (this.worker.policy.limits?.outputBytes !== undefined) request.stdout_cap = this.limits.outputBytes
    const context = opts.context ?? this.context
    const survived = this.pendingSurvived
    this.pendingSurvived = undefined
    if (context) assertCrossable(context, 'the session context')
    // What the last interrupt or timeout left, for the model: session['survived'].
    if (context || survived) request.session = survived ? { ...context, survived } : context
    // The block's whole input rides in its request: no second message, and nothing to wait for.
    if (opts.stdin !== undefined) request.stdin = opts.stdin
    const worker = this.worker
    worker.takeCancelled()
    const started = worker.send('run-block', { request })
    // The hard bound: interrupt at the timeout, kill after the grace (a guest can ignore or
    // swallow interrupts; it cannot ignore SIGKILL), and the wall clock kills outright.
    const deadline = new BlockDeadline(
      {
        interrupt: () => this.interruptWorker(worker, started.id, block),
        kill: (reason) => worker.retire(reason),
      },
      { timeoutMs: opts.timeoutMs, graceMs: this.graceMs, wallClockMs: this.limits.wallClockMs },
    )
    const current: NonNullable<Session['current']> = { job: started.id, block, deadline }
    this.current = current
    // While the block runs, the roots are measured at a bounded interval.
    this.idleUnwatch?.()
    const unwatch = this.disk.watch()
    try {
      let outcome: HostBlockOutcome
      try {
        const reply = await started.reply
        // The block's end is a check point too: what it wrote in its last moments counts.
        current.ended = true
        unwatch()
        await this.disk.settle()
        const parsed = parseGuestOutcome(reply)
        if (!parsed.success) {
          // Only guest code forging frames on the socket gets here.
          worker.retire('it answered a block with something that is not a block outcome')
          throw new VisError(
            'worker.protocol',
            `session ${this.id}: the worker answered the block with a malformed outcome; it was retired`,
            { sessionId: this.id, op: 'run-block' },
          )
        }
        deadline.clear()
        const { snapshot, ...rest } = parsed.data
        // The definitions snapshot is for persistence, not for the caller.
        if (snapshot !== undefined) this.lastSnapshot = snapshot
        const names = guestNames(rest)
        if (names) this.lastNames = names
        this.setup.chdir(guestCwd(rest))
        // What the block returned is held to the same cap as what it printed, before it is
        // stored, sent as an event or handed to a model.
        outcome = finishStopped(
          capOutcomeValues(this.budget.capOutcome(rest), this.budget.capChars),
          deadline,
          opts.timeoutMs,
          this.lastNames,
          () => worker.takeCancelled(),
          current.diskMessage,
        )
        // The block ended before a pass saw it go past the budget: it is told all the same.
        if (current.diskMessage !== undefined && deadline.cause === undefined) {
          outcome = { ...outcome, error: diskBudgetError(current.diskMessage, false) }
        }
      } catch (err) {
        if (deadline.killed === undefined || this.state !== 'ready') throw err
        const cancelled = worker.takeCancelled()
        const report = await this.replaceWorker(worker, deadline.killed)
        const partial = this.budget.capOutcome(this.blockOut ? { stdout: this.blockOut } : {})
        const survivedNow = survivedReplacement(
          deadline.cause ?? 'timeout',
          this.lastNames,
          report.restore,
          cancelled,
          report.failure,
        )
        if (report.restore) this.lastNames = report.restore.restored
        outcome = killedOutcome(partial, deadline, opts.timeoutMs, survivedNow, current.diskMessage)
      }
      if (outcome.survived) this.pendingSurvived = outcome.survived
      const result = toBlockResult(outcome)
      this.events.emit({
        type: 'block.finished',
        sessionId: this.id,
        block,
        outcome: result,
        ms: performance.now() - t0,
      })
      return result
    } finally {
      unwatch()
      deadline.clear()
      this.current = undefined
      this.blockOut = ''
      this.taken = 0
      this.watchIdle()
    }
  }

  // Between blocks the roots are still measured: a thread a block left running
  // writes on while the session sits idle (an agent waiting on its model, a person reading).
  private watchIdle(): void {
    this.idleUnwatch?.()
    this.idleUnwatch = this.state === 'disposed' ? undefined : this.disk.watch(DISK_IDLE_CHECK_MS)
  }

  // The old worker is dead (its tree SIGKILLed): a fresh one with the same spawn policy gets
  // the session's tools, runtime config, network and definitions. When none can start, the
  // session is retired with the reason.
  private async replaceWorker(
    old: Worker,
    reason: string,
  ): Promise<{ restore?: RestoreReport; failure?: string }> {
    this.detach()
    const respawn = this.respawn
    let restore: RestoreReport | undefined
    let failure: string | undefined
    const work = (async () => {
      const fresh = await respawn()
      if (this.state !== 'ready') {
        // Disposed while the fresh worker started: it must not outlive the session.
        await fresh.close()
        throw new VisError('session.disposed', `session ${this.id} was disposed during the replacement`, {
          sessionId: this.id,
        })
      }
      this.attach(fresh)
      restore = await this.setup.replay(fresh, this.lastSnapshot)
    })()
    this.replacing = work.catch(() => undefined)
    try {
      await work
      this.events.emit({
        type: 'worker.replaced',
        sessionId: this.id,
        oldPid: old.pid,
        pid: this.worker.pid,
        reason,
      })
    } catch (err) {
      failure = (err as Error).message
      if (this.worker !== old) this.worker.retire(`it could not be set up as a replacement: ${failure}`)
      this.markRetired(`its worker was killed (${reason}) and no replacement could start: ${failure}`)
    } finally {
      this.replacing = undefined
    }
    return { restore, failure }
  }

  // Output the running block has printed since the last take (or its start).
  takePartialStdout(): string {
    const s = this.blockOut.slice(this.taken)
    this.taken = this.blockOut.length
    return s
  }

  // Interrupts the running block and fails the host calls it has in flight; answers
  // whether the interrupt landed. Idle, it is a no-op.
  // A block that does not stop within the grace gets its worker replaced (see runBlockNow).
  async interrupt(): Promise<{ landed: boolean; retired: boolean }> {
    if (this.state !== 'ready') return { landed: false, retired: this.state === 'retired' }
    const cur = this.current
    if (cur === undefined) return { landed: false, retired: false }
    return (await cur.deadline.stop('interrupt')) as { landed: boolean; retired: boolean }
  }

  private async interruptWorker(
    worker: Worker,
    job: number,
    block: number,
  ): Promise<{ landed: boolean; retired: boolean }> {
    try {
      let r = await worker.interrupt(job)
      // Sent right behind its block, the interrupt can reach the worker before the interpreter
      // thread has taken the block from the worker's queue: not landed, though the block is
      // about to run. While it is still this block's turn, it is sent again until it lands.
      for (
        let waited = 0;
        !r.landed && !r.retired && this.current?.job === job && waited < EARLY_RETRY_MS;
      ) {
        await new Promise((resolve) => setTimeout(resolve, EARLY_RETRY_STEP_MS))
        waited += EARLY_RETRY_STEP_MS
        if (this.current?.job === job) r = await worker.interrupt(job)
      }
      this.events.emit({ type: 'interrupt', sessionId: this.id, block, ...r })
      return r
    } catch {
      // The worker is gone already: the block's outcome says what happened.
      return { landed: false, retired: true }
    }
  }

  // Ends the session: its worker process tree and its resources. Idempotent.
  async dispose(): Promise<void> {
    if (this.state === 'disposed') return
    this.state = 'disposed'
    for (const off of this.unhook) off()
    await Promise.allSettled([this.worker.close(), this.resources.dispose()])
    await this.onDispose?.(this)
  }

  // Kills the worker now; the session stays retired until disposed.
  retire(reason: string): void {
    if (this.state === 'ready') this.worker.retire(reason)
  }

  private markRetired(reason: string): void {
    if (this.state !== 'ready') return
    this.state = 'retired'
    this.retiredReason = reason
    this.events.emit({ type: 'worker.retired', sessionId: this.id, pid: this.worker.pid, reason })
  }

  private assertUsable(op: string): void {
    if (this.state === 'retired') {
      throw new VisError(
        'worker.retired',
        `session ${this.id} was retired (${this.retiredReason}); dispose it and create a new session`,
        { sessionId: this.id, op },
      )
    }
    if (this.state === 'disposed') {
      throw new VisError('session.disposed', `session ${this.id} is disposed`, { sessionId: this.id, op })
    }
  }

  private onOutput(ev: OutputNotification): void {
    const cur = this.current
    if (!cur || ev.job !== cur.job) return
    const { data, flood } = this.budget.take(ev.data)
    if (flood) {
      this.worker.retire(
        `the block printed over ${this.budget.floodChars} characters past the output cap of ${this.limits.outputBytes}`,
      )
      return
    }
    if (!data) return
    if (ev.stream === 'stdout') this.blockOut += data
    this.events.emit({ type: 'output', sessionId: this.id, block: cur.block, stream: ev.stream, data })
  }
}
