import type { z } from 'zod'
import { type Limits, LimitsSchema } from '../confinement/policy.js'
import { NetworkAck, type OutputNotification, StdinAck } from '../protocol/messages.js'
import { SessionResources } from '../tools/resources.js'
import type { SpawnHook, Tool } from '../tools/types.js'
import { VisError } from '../util/errors.js'
import { processTree } from '../worker/proctree.js'
import type { Worker } from '../worker/worker.js'
import { assertCrossable } from './crossing.js'
import { type SessionEvent, SessionEvents, type SessionEventType } from './events.js'
import { asTimeout, BlockOutcome } from './outcome.js'
import { OutputBudget } from './output-cap.js'
import { type BoundTool, type ToolGate, ToolTable } from './tool-table.js'

export const GUEST_API = 'vis_guest.api'

export type BindOptions = {
  doc?: string
  signature?: string
  args?: z.ZodTypeAny
  // 'required': every call waits for approval (src/agent/approvals.ts).
  approval?: 'required'
}
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
  // How the session's tools start processes (its jail); unset, they run on the host.
  spawn?: SpawnHook
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
  private readonly worker: Worker
  private readonly tools: ToolTable
  private tail: Promise<unknown> = Promise.resolve()
  private queued = 0
  private blockSeq = 0
  private current: { job: number; block: number } | undefined
  // The running block's stdout so far, and how much of it takePartialStdout has handed out.
  private blockOut = ''
  private taken = 0
  // The host's own cap on what a block may print: the guest runtime caps too, but
  // guest code can bypass it, and the worker must never grow the host's memory.
  private budget: OutputBudget
  readonly limits: Limits
  private installs: Promise<void>[] = []
  private readonly namespaces = new Map<
    string,
    Map<string, { name: string; doc: string; signature: string }>
  >()
  private readonly unhook: Array<() => void> = []
  private context: Record<string, unknown> | undefined
  private readonly onDispose?: (s: Session) => void | Promise<void>
  generation = 0
  // The guest's snapshot of the session's own definitions after the last block.
  lastSnapshot: unknown

  constructor(init: SessionInit) {
    this.id = init.id
    this.worker = init.worker
    this.roots = init.roots
    this.onDispose = init.onDispose
    this.limits = LimitsSchema.parse(init.worker.policy.limits ?? {})
    this.budget = new OutputBudget(this.limits.outputBytes)
    this.tools = new ToolTable(init.id, init.maxConcurrentHostCalls)
    this.worker.setHostHandler((call) =>
      this.tools.dispatch(call, {
        sessionId: this.id,
        roots: this.roots,
        resources: this.resources,
        spawn: init.spawn,
      }),
    )
    this.unhook.push(
      this.worker.on('output', (ev) => this.onOutput(ev)),
      this.worker.on('retired', ({ reason }) => this.markRetired(reason)),
      // Only guest code writing on the socket itself sends such frames: the worker has
      // shown it runs hostile native-level code, and its wire can no longer be trusted.
      this.worker.on('violation', ({ what }) =>
        this.worker.retire(`it sent ${what} on its wire (protocol violation)`),
      ),
      this.worker.on('exit', ({ state, code, signal, reason }) => {
        if (state === 'ready' || state === 'starting') {
          this.markRetired(
            reason ?? (signal ? `the worker was killed by ${signal}` : `the worker exited with code ${code}`),
          )
        }
      }),
    )
  }

  get pid(): number {
    return this.worker.pid
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

  on<T extends SessionEventType>(type: T, fn: (ev: Extract<SessionEvent, { type: T }>) => void): () => void {
    return this.events.on(type, fn)
  }

  // Binds a host function as a tool the guest calls by `name`. The function receives
  // the positional arguments, then the tool context (abort signal, roots, resources).
  // Awaiting is optional: the next block waits for the install and reports its failure.
  bind(name: string, fn: (...args: any[]) => unknown, opts: BindOptions = {}): Promise<void> {
    return this.bindTool({
      name,
      doc: opts.doc ?? '',
      signature: opts.signature ?? '(*args)',
      args: opts.args,
      ...(opts.approval ? { approval: opts.approval } : {}),
      run: (args, ctx) => fn(...args, ctx),
    })
  }

  bindTool(tool: BoundTool | Tool): Promise<void> {
    this.assertUsable('bind')
    const bound: BoundTool = tool
    if (!/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/.test(bound.name)) {
      throw new VisError(
        'tool.bad-name',
        `tool name ${JSON.stringify(bound.name)} is not a Python identifier`,
        {
          sessionId: this.id,
        },
      )
    }
    this.tools.set(bound)
    const spec = { name: bound.name, doc: bound.doc, signature: bound.signature }
    // A warm worker may already carry this exact spec (the default tools).
    const pre = this.worker.preinstalled.get(bound.name)
    this.worker.preinstalled.delete(bound.name)
    if (pre === JSON.stringify(spec)) return Promise.resolve()
    return this.track(this.installTool(spec))
  }

  unbind(name: string): Promise<void> {
    this.assertUsable('unbind')
    this.tools.delete(name)
    return this.track(this.callGuest('remove_tool', name))
  }

  // Host data that crosses as JSON; a value that cannot is refused with its key path.
  setData(name: string, value: unknown): Promise<void> {
    this.assertUsable('setData')
    assertCrossable(value, `binding ${name}`)
    return this.track(this.installTool({ name, value: value ?? null, kind: 'data' }))
  }

  // The seed's setPythonBinding: a function becomes a host tool; `ns.method` publishes one
  // method through the capability namespace `ns`; anything else crosses as JSON data.
  setBinding(name: string, value: unknown, opts: BindOptions = {}): Promise<void> {
    if (typeof value !== 'function') return this.setData(name, value)
    const fn = value as (...args: any[]) => unknown
    const dot = name.indexOf('.')
    if (dot < 0) return this.bind(name, fn, opts)
    this.assertUsable('bind')
    const ns = name.slice(0, dot)
    const method = name.slice(dot + 1)
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(ns) || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(method)) {
      throw new VisError('tool.bad-name', `binding ${JSON.stringify(name)} is not namespace.method`, {
        sessionId: this.id,
      })
    }
    const signature = opts.signature ?? '(*args)'
    this.tools.set({
      name,
      doc: opts.doc ?? '',
      signature,
      args: opts.args,
      run: (args, ctx) => fn(...args, ctx),
    })
    const methods =
      this.namespaces.get(ns) ?? new Map<string, { name: string; doc: string; signature: string }>()
    methods.set(method, { name: method, doc: opts.doc ?? '', signature })
    this.namespaces.set(ns, methods)
    // The guest replaces the whole namespace object, so every method is sent again.
    return this.track(this.installTool({ name: ns, kind: 'namespace', methods: [...methods.values()] }))
  }

  toolNames(): string[] {
    return this.tools.names()
  }

  // What the model is told about each bound tool (the agent's prompt).
  toolSpecs(): Array<Pick<BoundTool, 'name' | 'doc' | 'signature' | 'approval'>> {
    return this.tools.names().map((n) => {
      const t = this.tools.get(n)!
      return { name: t.name, doc: t.doc, signature: t.signature, approval: t.approval }
    })
  }

  // Every tool call passes through `gate` (approvals, the journal); undefined removes it.
  setToolGate(gate: ToolGate | undefined): void {
    this.tools.gate = gate
  }

  // The next block waits for installs sent before it. The returned promise is marked
  // handled, so a caller that does not await it never causes an unhandled rejection.
  private track(p: Promise<unknown>): Promise<void> {
    const done = p.then(() => undefined)
    this.installs.push(done)
    done.catch(() => undefined)
    return done
  }

  private installTool(spec: Record<string, unknown>): Promise<unknown> {
    return this.worker.call('install-tool', { spec })
  }

  // Calls one function of the guest runtime's API with one JSON argument.
  callGuest(fn: string, arg?: unknown): Promise<unknown> {
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
    return StdinAck.parse(await this.worker.call('stdin', { job, data, ...(opts.eof ? { eof: true } : {}) }))
  }

  // Tightens the session's network for the rest of its life ({ enabled: false }, or a
  // narrower allow list); anything looser is refused with worker.network-loosen.
  async setNetwork(net: { enabled: boolean; allow?: string[] }): Promise<NetworkAck> {
    this.assertUsable('network')
    return NetworkAck.parse(await this.worker.call('network', net))
  }

  // Calls module.fn(*args) in the interpreter; arguments and result cross as JSON.
  async callModule(module: string, fn: string, args: unknown[]): Promise<unknown> {
    this.assertUsable('callModule')
    return this.worker.call('run', { module, fn, args })
  }

  // Runs one block; blocks of one session run one at a time, in call order.
  async runBlock(code: string, opts: RunBlockOptions = {}): Promise<BlockOutcome> {
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

  private async runBlockNow(code: string, opts: RunBlockOptions): Promise<BlockOutcome> {
    this.assertUsable('runBlock')
    if (this.installs.length > 0) {
      const pending = this.installs
      this.installs = []
      await Promise.all(pending)
    }
    const block = ++this.blockSeq
    const t0 = performance.now()
    this.blockOut = ''
    this.taken = 0
    this.budget = new OutputBudget(this.limits.outputBytes)
    this.events.emit({ type: 'block-started', sessionId: this.id, block, code })
    // The guest runtime truncates at the same cap, with its own marker; the host's
    // OutputBudget holds the line when guest code goes around it.
    const request: Record<string, unknown> = { code }
    if (this.worker.policy.limits?.outputBytes !== undefined) request.stdout_cap = this.limits.outputBytes
    const context = opts.context ?? this.context
    if (context) {
      assertCrossable(context, 'the session context')
      request.session = context
    }
    const started = this.worker.start('run-block', { request })
    this.current = { job: started.id, block }
    if (opts.stdin !== undefined) {
      // Refused only when the block ended first; the block's outcome says what happened.
      this.worker.call('stdin', { job: started.id, data: opts.stdin, eof: true }).catch(() => undefined)
    }
    let timedOut = false
    // The hard wall clock: no interrupt, the worker tree is SIGKILLed (a guest can
    // ignore or swallow interrupts; it cannot ignore SIGKILL).
    let wallHit = false
    const wall = setTimeout(() => {
      wallHit = true
      this.worker.retire(`the block ran past the wall clock limit of ${this.limits.wallClockMs} ms`)
    }, this.limits.wallClockMs)
    const timer =
      opts.timeoutMs !== undefined
        ? setTimeout(() => {
            timedOut = true
            void this.interrupt().catch(() => undefined)
          }, opts.timeoutMs)
        : undefined
    try {
      let outcome: BlockOutcome
      try {
        const parsed = BlockOutcome.safeParse(await started.reply)
        if (!parsed.success) {
          // Only guest code forging frames on the socket gets here.
          this.worker.retire('it answered a block with something that is not a block outcome')
          throw new VisError(
            'worker.protocol',
            `session ${this.id}: the worker answered the block with a malformed outcome; it was retired`,
            { sessionId: this.id, op: 'run-block' },
          )
        }
        const { snapshot, ...rest } = parsed.data
        // The definitions snapshot is for persistence, not for the caller.
        if (snapshot !== undefined) this.lastSnapshot = snapshot
        outcome = this.budget.capOutcome(rest)
        if (timedOut && outcome.error?.phase === 'interrupted') outcome = asTimeout(outcome, opts.timeoutMs!)
      } catch (err) {
        if (!((timedOut || wallHit) && this.state === 'retired')) throw err
        const partial = this.budget.capOutcome(this.blockOut ? { stdout: this.blockOut } : {})
        if (wallHit) {
          const message = `the block ran past the wall clock limit of ${this.limits.wallClockMs} ms; its worker was killed and this session must be rebuilt`
          outcome = { ...partial, error: { phase: 'timeout', message }, timedOut: true }
        } else {
          const note =
            'it did not stop when interrupted, so its worker was retired and this session must be rebuilt'
          outcome = asTimeout(partial, opts.timeoutMs!, note)
        }
      }
      this.events.emit({
        type: 'block-finished',
        sessionId: this.id,
        block,
        outcome,
        ms: performance.now() - t0,
      })
      return outcome
    } finally {
      clearTimeout(timer)
      clearTimeout(wall)
      this.current = undefined
      this.blockOut = ''
      this.taken = 0
    }
  }

  // Output the running block has printed since the last take (or its start).
  takePartialStdout(): string {
    const s = this.blockOut.slice(this.taken)
    this.taken = this.blockOut.length
    return s
  }

  // Interrupts the running block and fails the host calls it has in flight; answers
  // whether the interrupt landed. Idle, it is a no-op.
  async interrupt(): Promise<{ landed: boolean; retired: boolean }> {
    if (this.state !== 'ready') return { landed: false, retired: this.state === 'retired' }
    const job = this.current?.job
    if (job === undefined) return { landed: false, retired: false }
    const r = await this.worker.interrupt(job)
    this.events.emit({ type: 'interrupt', sessionId: this.id, ...r })
    return r
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
    this.events.emit({ type: 'worker-retired', sessionId: this.id, pid: this.worker.pid, reason })
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
