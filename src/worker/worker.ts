import type { ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { closeSync, mkdirSync, rmSync } from 'node:fs'
import type { Socket } from 'node:net'
import { join } from 'node:path'
import { LimitsSchema } from '../contracts/jail-policy.js'
import type { NetworkEntry } from '../contracts/network-policy.js'
import { isSpinUs, MAX_SPIN_US } from '../native/wire-spin.js'
import { Channel, type ChannelStats } from '../protocol/channel.js'
import {
  CHILD_NOTIFICATION_SCHEMAS,
  CHILD_REQUEST_SCHEMAS,
  type HostCallRequest,
  type OutputNotification,
} from '../protocol/messages.js'
import { type ParentOp, type ParentParams, parseReply } from '../protocol/parent-requests.js'
import { VisError } from '../util/errors.js'
import { guestDir } from '../util/home.js'
import { outboxesDir } from '../util/home-parts.js'
import { childEntry } from './entry.js'
import { guestBytecode } from './guest-bytecode.js'
import { appendLog, capLog, logDir, openWorkerLog, pruneLogs, readLogTail } from './logfile.js'
import { processTree, waitGone } from './proctree.js'
import { pythonHome } from './python-home.js'
import { type EnterNamespaces, type SpawnedProcess, spawnWorkerProcess } from './spawn.js'
import { tightenedNetwork, type WorkerPolicy } from './worker-policy.js'

export const DEFAULT_INTERRUPT_ACK_MS = 2000
const CLOSE_GRACE_MS = 1000

export type WorkerOptions = {
  home: string
  policy: WorkerPolicy
  // Python minor ("3.11"); unset lets the distribution resolver choose.
  python?: string
  interruptAckMs?: number
  maxFrameChars?: number
  maxDepth?: number
  // Sent with install-runtime: the guest runtime's configuration.
  runtimeConfig?: Record<string, unknown>
  // Another child entry speaking the same wire (tests use a misbehaving one).
  entry?: string
  env?: Record<string, string>
  // false: no OS jail (peers that run no guest code); default true.
  confine?: boolean
  // A trusted extension worker: no jail, no audit hook, no sandbox guest runtime.
  trusted?: boolean
  // Unconfined only: start inside these namespaces (a draft's, so the process sees the
  // draft's overlay at the root's path). Open fds, owned by the caller.
  enter?: EnterNamespaces
  // 'permissive' installs an audit policy that refuses nothing the hook can grant, so
  // the attack suite can show the kernel layers holding by themselves in a real worker.
  // Never for untrusted code outside that proof.
  auditPolicy?: 'enforce' | 'permissive'
  // How long the child's idle interpreter thread polls its socket before sleeping, in
  // µs (native/runtime/wire.cc): trades a little CPU after each message for round trips
  // without a thread wake-up. 0 turns it off.
  spinUs?: number
}

export const DEFAULT_SPIN_US = 100

// The child's JavaScript only serves control ops (the hot path is C++ and Python), so
// V8's compilers and WebAssembly are dead weight there: without them an idle worker
// maps ~5 MB less of the node binary.
const CHILD_NODE_FLAGS = ['--jitless', '--no-expose-wasm']

// VIS_WIRE_SPIN_US, when the embedding application did not choose (checked by the caller).
function spinFromEnv(): number {
  const raw = process.env.VIS_WIRE_SPIN_US
  return raw === undefined || raw === '' ? DEFAULT_SPIN_US : Number(raw)
}

export type HostCall = { callId: number; name: string; args: unknown[]; signal: AbortSignal }
export type HostCallHandler = (call: HostCall) => Promise<unknown>

export type WorkerState = 'starting' | 'ready' | 'retired' | 'exited' | 'closed'

export type WorkerEvents = {
  output: (ev: OutputNotification) => void
  exit: (ev: { code: number | null; signal: string | null; state: WorkerState; reason?: string }) => void
  retired: (ev: { reason: string }) => void
  // A frame no honest child sends (see ChannelOptions.onViolation).
  violation: (ev: { what: string }) => void
}

// An unconfined child inherits the host's environment, minus what breaks it: eager
// binding breaks the addon's lazily bound libpython symbols (runtime notes section 1).
function hostEnv(): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v
  for (const k of [
    'LD_BIND_NOW',
    'NODE_TEST_CONTEXT',
    'NODE_OPTIONS',
    'VIS_PYTHON_HOME',
    'VIS_PYTHON_VERSION',
  ]) {
    delete env[k]
  }
  return env
}

// The host's handle on one helper process: its wire, its pending calls, its lifecycle.
export class Worker {
  readonly pid: number
  readonly logPath: string
  // Stops keeping the log small (logfile.ts capLog) and cuts it to its tail, at exit.
  private readonly uncapLog: () => void
  readonly policy: WorkerPolicy
  // Tool specs installed before the worker had a session (JSON text by name): a session
  // binding the same spec skips the round trip.
  readonly preinstalled = new Map<string, string>()
  // Files the guest closes here are attached to the block outcome. It is a host
  // directory bound read-write into the jail at the same path, so the host can read
  // the attachments the outcome names.
  readonly outbox: string
  state: WorkerState = 'starting'
  private readonly channel: Channel
  private readonly hostCalls = new Map<number, AbortController>()
  // Tool name per host call in flight, and the calls an interrupt or a kill cancelled since
  // the last takeCancelled() (the session's survived report names them).
  private readonly hostCallNames = new Map<number, string>()
  private cancelled: { tool: string; call_id: number }[] = []
  private hostHandler: HostCallHandler | undefined
  private readonly listeners: { [K in keyof WorkerEvents]: Set<WorkerEvents[K]> } = {
    output: new Set(),
    exit: new Set(),
    retired: new Set(),
    violation: new Set(),
  }
  private readonly exited: Promise<void>
  private inFlight = 0
  private retireReason: string | undefined
  private exitWaiters: { ref: () => void; unref: () => void }
  // The process tree once started (jailed: bubblewrap, its init, the helper), so that
  // "gone" means every one of them, not just the root.
  private tree: number[] = []

  private readonly child: ChildProcess

  private constructor(
    private readonly spawned: SpawnedProcess,
    logPath: string,
    outbox: string,
    private readonly opts: WorkerOptions,
  ) {
    this.outbox = outbox
    const child = spawned.child
    this.child = child
    this.pid = child.pid!
    this.logPath = logPath
    this.uncapLog = capLog(() => this.logPath)
    this.policy = opts.policy
    const socket = child.stdio[3] as Socket
    this.channel = Channel.overSocket(socket, {
      name: `host<-worker ${this.pid}`,
      log: (line) => appendLog(this.logPath, `[host] ${line}`),
      maxFrameChars: opts.maxFrameChars,
      maxDepth: opts.maxDepth,
      requests: CHILD_REQUEST_SCHEMAS,
      onRequest: (_op, msg: HostCallRequest) => this.serveHostCall(msg),
      notifications: CHILD_NOTIFICATION_SCHEMAS,
      onNotification: (_op, msg: OutputNotification) => {
        for (const fn of this.listeners.output) fn(msg)
      },
      // The addon never writes such a frame: guest code wrote on the socket itself. The
      // worker only reports it; a session retires the worker (SECURITY.md).
      onViolation: (what) => {
        for (const fn of this.listeners.violation) fn({ what })
      },
    })
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.onExit(code, signal)
        resolve()
      })
    })
    // Whoever waits for the exit keeps the host alive until it happens.
    const ref = () => this.child.ref()
    const unref = () => this.child.unref()
    this.exitWaiters = { ref, unref }
    // An idle worker must not keep the host process alive; a pending call does.
    child.unref()
    socket.unref()
  }

  static async start(opts: WorkerOptions): Promise<Worker> {
    const entry = opts.entry ?? (await childEntry())
    const confine = opts.trusted ? false : (opts.confine ?? true)
    const spinUs = opts.spinUs ?? spinFromEnv()
    if (!isSpinUs(spinUs)) {
      throw new VisError(
        'worker.options',
        `spinUs is a whole number of microseconds from 0 to ${MAX_SPIN_US}`,
        {
          spinUs,
        },
      )
    }
    const env: Record<string, string> = {
      ...opts.env,
      VIS_WIRE_SPIN_US: String(spinUs),
      ...(opts.trusted ? { VIS_WORKER_TRUSTED: '1' } : {}),
    }
    const readOnly: string[] = []
    if (!opts.entry) {
      const home = await pythonHome(opts.python)
      env.VIS_PYTHON_HOME = home.root
      env.VIS_PYTHON_VERSION = home.minor
      readOnly.push(home.root)
      // The guest's bytecode, compiled by the host before its first worker (guest-bytecode.ts).
      await guestBytecode(guestDir, home, join(logDir(opts.home), 'pool.log'))
    }
    const outbox = join(outboxesDir(opts.home), `worker-${randomBytes(6).toString('hex')}`)
    mkdirSync(outbox, { recursive: true, mode: 0o700 })
    pruneLogs(opts.home)
    const log = openWorkerLog(opts.home)
    let spawned: SpawnedProcess
    try {
      spawned = await spawnWorkerProcess({
        policy: opts.policy,
        command: process.execPath,
        args: [...CHILD_NODE_FLAGS, entry],
        env: confine ? env : { ...hostEnv(), ...env, VIS_HOME: opts.home },
        logFd: log.fd,
        readOnly,
        writable: [outbox],
        confine,
        ...(opts.enter ? { enter: opts.enter } : {}),
      })
    } catch (err) {
      rmSync(log.path, { force: true })
      rmSync(outbox, { recursive: true, force: true })
      throw err
    } finally {
      closeSync(log.fd)
    }
    const { child } = spawned
    if (child.pid === undefined) {
      const err = await new Promise<Error>((resolve) => child.once('error', resolve))
      throw new VisError('worker.spawn', `could not start a worker process: ${err.message}`, { path: entry })
    }
    const worker = new Worker(spawned, log.adopt(child.pid), outbox, opts)
    try {
      if (opts.trusted) {
        worker.state = 'ready'
        return worker
      }
      // The audit policy (and, jailed, seccomp) goes in before the guest runtime loads.
      await worker.call('confine', {
        policy: opts.policy,
        // Only where the kernel offers seccomp: a missing layer reaches here only through the
        // VIS_ALLOW_UNCONFINED opt-out (spawnConfined refuses otherwise), as under qemu-user (issue 37).
        seccomp: confine && !spawned.layers?.unenforced.includes('seccomp'),
        writable: [worker.outbox],
        ...(opts.auditPolicy === 'permissive' ? { audit: 'permissive' } : {}),
      })
      await worker.call('install-runtime', { config: { ...opts.runtimeConfig, outbox: worker.outbox } })
    } catch (err) {
      worker.kill()
      await worker.waitExit()
      throw err
    }
    if (worker.state === 'starting') worker.state = 'ready'
    worker.tree = processTree(worker.pid)
    return worker
  }

  get alive(): boolean {
    return this.state === 'starting' || this.state === 'ready'
  }

  get pendingCount(): number {
    return this.channel.pendingCount
  }

  // Counts of wire problems seen from this child (malformed lines, stray replies...).
  get wireStats(): Readonly<ChannelStats> {
    return this.channel.stats
  }

  on<K extends keyof WorkerEvents>(event: K, fn: WorkerEvents[K]): () => void {
    this.listeners[event].add(fn)
    return () => this.listeners[event].delete(fn)
  }

  setHostHandler(handler: HostCallHandler | undefined): void {
    this.hostHandler = handler
  }

  // Sends a parent op; `id` names the job for output notifications and interrupts. The
  // parameters are typed by the op's schema (src/protocol/parent-requests.ts); the reply is
  // read with parseReply.
  send<O extends ParentOp>(op: O, params: ParentParams<O>): { id: number; reply: Promise<unknown> } {
    if (!this.alive) {
      const code = this.state === 'retired' ? 'worker.retired' : 'worker.closed'
      return {
        id: 0,
        reply: Promise.reject(
          new VisError(
            code,
            `worker ${this.pid} is ${this.state}; ${this.retireReason ?? 'it takes no more work'}`,
            {
              op,
              pid: this.pid,
            },
          ),
        ),
      }
    }
    const started = this.channel.send(op, params)
    this.track(started.reply)
    return started
  }

  call<O extends ParentOp>(op: O, params: ParentParams<O>): Promise<unknown> {
    return this.send(op, params).reply
  }

  // Keeps the socket referenced exactly while something is waiting on the worker.
  private track(p: Promise<unknown>): void {
    const socket = this.child.stdio[3] as Socket
    // The child handle too: a death must still be observed once the socket has closed.
    if (this.inFlight++ === 0) {
      socket.ref()
      this.child.ref()
    }
    const done = () => {
      if (--this.inFlight === 0) {
        socket.unref()
        this.child.unref()
      }
    }
    p.then(done, done)
  }

  // Interrupts the running job (or whatever runs) and fails the host calls in flight.
  // An ack that does not come within the bound retires the worker.
  async interrupt(job?: number): Promise<{ landed: boolean; retired: boolean }> {
    if (!this.alive) return { landed: false, retired: this.state === 'retired' }
    this.abortHostCalls(new VisError('worker.interrupted', 'the block was interrupted'))
    const bound = this.opts.interruptAckMs ?? DEFAULT_INTERRUPT_ACK_MS
    const started = this.send('interrupt', job === undefined ? {} : { job })
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), bound)
    })
    try {
      const r = await Promise.race([started.reply, timeout])
      if (r === 'timeout') {
        this.retire(`the interrupt was not acknowledged within ${bound} ms`)
        return { landed: false, retired: true }
      }
      return { landed: parseReply('interrupt', r).landed, retired: false }
    } catch (err) {
      if (this.state === 'retired') return { landed: false, retired: true }
      throw err
    } finally {
      clearTimeout(timer)
    }
  }

  // Kills the process tree and fails every pending call at once. Never comes back.
  retire(reason: string): void {
    if (this.state === 'retired' || this.state === 'closed' || this.state === 'exited') return
    this.state = 'retired'
    this.retireReason = `retired: ${reason}`
    appendLog(this.logPath, `[host] worker ${this.pid} retired: ${reason}`)
    const err = new VisError('worker.retired', `worker ${this.pid} was retired: ${reason}`, { pid: this.pid })
    this.channel.failAll(err)
    this.abortHostCalls(err)
    this.kill()
    for (const fn of this.listeners.retired) fn({ reason })
  }

  // Asks the child to close, then kills the tree if it lingers.
  async close(): Promise<void> {
    if (this.state === 'exited') return
    if (this.alive) {
      this.state = 'closed'
      this.abortHostCalls(new VisError('worker.closed', 'the session was disposed'))
      const closing = this.channel.request('close', {}).catch(() => undefined)
      let timer: NodeJS.Timeout | undefined
      const grace = new Promise((r) => {
        timer = setTimeout(r, CLOSE_GRACE_MS)
      })
      await Promise.race([closing.then(() => this.waitExit()), grace])
      clearTimeout(timer)
      this.channel.failAll(new VisError('worker.closed', `worker ${this.pid} was closed`, { pid: this.pid }))
    }
    this.kill()
    await this.waitExit()
  }

  kill(): void {
    this.spawned.kill()
  }

  // The host side of a network change the worker acknowledged: its egress proxy (the
  // boundary) applies the same, tighter, rules to every new connection and lookup.
  setEgressRules(net: { enabled: boolean; allow: NetworkEntry[] }): void {
    this.spawned.egress?.setRules(tightenedNetwork(this.policy.network, net))
  }

  async waitExit(): Promise<void> {
    this.exitWaiters.ref()
    try {
      await this.exited
    } finally {
      this.exitWaiters.unref()
    }
    if (!(await waitGone(this.tree))) {
      for (const pid of this.tree) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          // gone
        }
      }
      await waitGone(this.tree)
    }
  }

  logTail(maxBytes = 4096): string {
    return readLogTail(this.logPath, maxBytes)
  }

  private abortHostCalls(reason: Error): void {
    for (const [id, ac] of this.hostCalls) {
      this.cancelled.push({ tool: this.hostCallNames.get(id) ?? '?', call_id: id })
      ac.abort(reason)
    }
    this.hostCalls.clear()
    this.hostCallNames.clear()
  }

  // The host calls cancelled since the last take, in the order they were cancelled.
  takeCancelled(): { tool: string; call_id: number }[] {
    const out = this.cancelled
    this.cancelled = []
    return out
  }

  private async serveHostCall(msg: HostCallRequest): Promise<unknown> {
    const handler = this.hostHandler
    if (!handler) {
      throw new VisError(
        'tool.unbound',
        `no tool named ${JSON.stringify(msg.name)} is bound in this session`,
        {
          tool: msg.name,
        },
      )
    }
    const ac = new AbortController()
    this.hostCalls.set(msg.id, ac)
    this.hostCallNames.set(msg.id, msg.name)
    try {
      return await handler({ callId: msg.id, name: msg.name, args: msg.args, signal: ac.signal })
    } finally {
      this.hostCalls.delete(msg.id)
      this.hostCallNames.delete(msg.id)
    }
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    rmSync(this.outbox, { recursive: true, force: true })
    const prior = this.state
    let reason: string | undefined
    if (prior === 'starting' || prior === 'ready') {
      this.state = 'exited'
      // The OOM killer's SIGKILL reads as "code 137" through bubblewrap: name the cause.
      const oom = this.spawned.outOfMemory?.() === true
      const how = oom
        ? `was killed by the memory limit (${LimitsSchema.parse(this.policy.limits ?? {}).memoryMb} MB): out of memory`
        : signal
          ? `was killed by ${signal}`
          : `exited with code ${code}`
      const tail = this.logTail(2048).trimEnd()
      const err = new VisError(
        'worker.died',
        `worker ${this.pid} ${how}; last lines of ${this.logPath}:\n${tail || '(log is empty)'}`,
        { pid: this.pid, path: this.logPath, code, signal, logTail: tail },
      )
      appendLog(this.logPath, `[host] worker ${this.pid} ${how}`)
      reason = `the worker ${how}`
      this.channel.failAll(err)
      this.abortHostCalls(err)
    } else if (prior === 'closed') {
      this.state = 'exited'
    }
    for (const fn of this.listeners.exit) fn({ code, signal, state: prior, reason })
    this.uncapLog()
  }
}
