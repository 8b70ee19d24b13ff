import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { z } from 'zod'
import { type ResolvedDistribution, resolveDistribution } from '../distribution/resolve.js'
import { errorMessage, VisError } from '../util/errors.js'
import { guestDir } from '../util/home.js'
import { loadLoader, type RuntimeAddon, requireRuntime, runtimeAddonPath } from './addon.js'
import { type AuditPolicy, checkTightens, normalizePolicy } from './audit-policy.js'
import { type Outcome, OutcomeSchema } from './job-outcome.js'
import { isSpinUs, MAX_SPIN_US } from './wire-spin.js'

// The distribution fields the native core needs (a ResolvedDistribution has them all).
export type Distribution = Pick<
  ResolvedDistribution,
  'root' | 'version' | 'minor' | 'libpython' | 'executable'
> &
  Partial<Pick<ResolvedDistribution, 'kind' | 'source' | 'platform' | 'include'>>

export type LoadOptions = {
  minor?: string
  dist?: Distribution
  // Prepended to sys.path (and readable before a policy is installed).
  sysPath?: string[]
  // sys.argv (default ['']).
  argv?: string[]
  // Put vis-guest/ on sys.path (default true).
  guest?: boolean
  // Route sys.stdout/sys.stderr through onOutput (default true); false keeps python3's
  // fd-backed streams (the `vis python` CLI).
  capture?: boolean
  // Install the fail-closed audit hook (default true). false = no hook at all, as in
  // python3: only for code the user runs in their own terminal.
  audit?: boolean
  // `vis python`: argv is python3's command line (options included), parsed by CPython on
  // python3's default (non-isolated) config; see native/runtime/cli_main.cc. -h, -V and
  // usage errors reject with VisError('native.init-exit', context.status).
  commandLine?: boolean
}

// What a python3 command line asks to run (native/runtime/cli_main.cc: CliPlan).
export const CommandLinePlanSchema = z.object({
  inspect: z.boolean(),
  quiet: z.boolean(),
  command: z.string().optional(),
  module: z.string().optional(),
  file: z.string().optional(),
})
export type CommandLinePlan = z.infer<typeof CommandLinePlanSchema>

export type JobOptions = { ns?: string; filename?: string }
export type JobPromise<T> = Promise<T> & { job: number }
export type Stream = 'stdout' | 'stderr'
export type OutputListener = (job: number, stream: Stream, text: string) => void
export type HostCallHandler = (name: string, argsJson: string, signal: AbortSignal) => Promise<string>

// Wire mode (the worker child's hot path): C++ reads the socket on `fd`. Requests whose
// op is in workOps run on the interpreter thread as `handler.fn(line)` from module
// `handler.module`, returning the reply line (or None), written straight back; `interrupt` requests are answered in C++; output
// of those jobs goes out as {"op":"output",...} notifications and their host calls as
// {"id","op":"host","name","args"} requests (replies are matched in C++). Every other
// line reaches onMessage; answer through wireWrite().
export type WireOptions = {
  fd: number
  workOps: string[]
  handler: { module: string; fn: string }
  onMessage: (line: string) => void
  onClose?: (why: string) => void
  // The caps the parent applies to each frame it reads (a line's length as a JS string,
  // nesting): host calls past them are refused in the guest (`_vis.HostCallTooLarge`)
  // instead of being sent. Without it the addon's own defaults (16 MiB, 64), the same as
  // src/protocol/framing.ts.
  limits?: { maxFrameChars: number; maxDepth: number }
  // How long the idle interpreter thread polls the socket before it sleeps, in µs
  // (native/runtime/wire.cc says why); 0 never spins. Default 0.
  spinUs?: number
}

enum Ev {
  Ready = 1,
  InitError = 2,
  Result = 3,
  Output = 4,
  HostCall = 5,
  HostCancel = 6,
  Closed = 7,
  WireMessage = 8,
  WireClosed = 9,
  InitExit = 10,
}
enum Kind {
  Exec = 1,
  Eval = 2,
  Compile = 3,
  Call = 4,
  Main = 5,
  Finalize = 6,
  RunModule = 8,
  Repl = 9,
}

type Pending = { resolve: (o: Outcome) => void; reject: (e: unknown) => void }

export class PythonRuntime {
  readonly version: string
  readonly minor: string
  readonly distribution: Distribution
  private readonly addon: RuntimeAddon
  private nextJob = 0
  private inFlight = 0
  private readonly jobs = new Map<number, Pending>()
  private readonly outputListeners = new Set<OutputListener>()
  private hostHandler: HostCallHandler | undefined
  private readonly hostCalls = new Map<number, AbortController>()
  private policy: AuditPolicy | undefined
  private readonly audit: boolean
  private closing: Promise<number> | undefined
  private onClosed: ((code: number) => void) | undefined
  private wire: WireOptions | undefined
  // Set at start with LoadOptions.commandLine: what the command line asks to run.
  commandLine: CommandLinePlan | undefined

  /** @internal use loadPython() */
  constructor(addon: RuntimeAddon, dist: Distribution, version: string, audit: boolean) {
    this.addon = addon
    this.distribution = dist
    this.version = version
    this.minor = dist.minor
    this.audit = audit
  }

  exec(code: string, opts: JobOptions = {}): JobPromise<Outcome> {
    return this.submit(Kind.Exec, code, opts.filename ?? '<block>', opts.ns ?? '__main__')
  }

  eval(expr: string, opts: Pick<JobOptions, 'ns'> = {}): JobPromise<Outcome> {
    return this.submit(Kind.Eval, expr, opts.ns ?? '__main__', '')
  }

  compile(code: string, opts: Pick<JobOptions, 'filename'> = {}): JobPromise<Outcome> {
    return this.submit(Kind.Compile, code, opts.filename ?? '<block>', '')
  }

  // Imports module, calls fn(*json.loads(argsJson)); value is json.dumps of the result.
  callOutcome(module: string, fn: string, argsJson: string): JobPromise<Outcome> {
    return this.submit(Kind.Call, module, fn, argsJson)
  }

  // Like callOutcome, resolving to the result's JSON text; a Python exception rejects
  // with VisError('python.exception') carrying the structured error as context.
  call(module: string, fn: string, argsJson: string): JobPromise<string> {
    const p = this.callOutcome(module, fn, argsJson)
    const out = p.then((o) => {
      if (o.ok) return o.value as string
      throw new VisError('python.exception', `${module}.${fn}() raised ${o.error.type}: ${o.error.message}`, {
        op: 'call',
        error: o.error,
      })
    })
    return Object.assign(out, { job: p.job })
  }

  // Runs code as python3 runs a script: in __main__ (with __file__ for a real path),
  // printing an uncaught exception through sys.excepthook. error.exitCode for SystemExit.
  runMain(code: string, filename: string): JobPromise<Outcome> {
    return this.submit(Kind.Main, code, filename, '__main__')
  }

  // `python3 -m module`: runpy in __main__, errors printed as python3 prints them.
  runModule(module: string): JobPromise<Outcome> {
    return this.submit(Kind.RunModule, module, '', '')
  }

  // python3's interactive loop in __main__ (readline through sys.__interactivehook__),
  // until EOF (ok) or SystemExit (error.exitCode); banner: python3's opening lines;
  // startup: run $PYTHONSTARTUP first (python3 does when the REPL has no program).
  repl(banner: boolean, startup = false): JobPromise<Outcome> {
    return this.submit(Kind.Repl, banner ? '1' : '', startup ? '1' : '', '')
  }

  onOutput(listener: OutputListener): () => void {
    this.outputListeners.add(listener)
    return () => this.outputListeners.delete(listener)
  }

  // What the running job (or `job`, if it is the running one) printed since the last take.
  takeOutput(job?: number): { stdout: string; stderr: string } | null {
    return this.addon.takeOutput(job)
  }

  // Raises KeyboardInterrupt in the running job (or `job` if it is running).
  // false when nothing matching runs: an idle interrupt is a no-op.
  interrupt(job?: number): boolean {
    return this.addon.interrupt(job)
  }

  // The handler answers with a reply envelope ({"ok":true,"value":...} or
  // {"ok":false,"error":{"code","message"}}); a throw becomes an error envelope.
  onHostCall(handler: HostCallHandler): void {
    this.hostHandler = handler
  }

  // The first call replaces the fail-closed bootstrap state; later calls may only tighten.
  installPolicy(policy: AuditPolicy): void {
    if (!this.audit) {
      throw new VisError(
        'native.no-audit',
        'this runtime was loaded without the audit hook (audit: false)',
        {},
      )
    }
    const next = normalizePolicy(policy)
    checkTightens(this.policy, next)
    this.addon.installPolicy({
      readOnly: next.readOnly,
      readWrite: next.readWrite,
      ...(next.readOnlyRoots ? { readOnlyRoots: next.readOnlyRoots } : {}),
      ...(next.readOnlyWhy ? { readOnlyWhy: next.readOnlyWhy } : {}),
      network: next.network.enabled,
      ...(next.network.allow ? { allow: next.network.allow } : {}),
      processes: next.processes,
      ctypes: next.ctypes,
    })
    this.policy = next
  }

  // While `why` is set, the audit hook refuses writes that could grow the roots (opening for
  // writing, mkdir, links, copies) with it; deleting stays allowed. The session's disk budget.
  refuseWrites(why: string | undefined): void {
    if (this.audit) this.addon.setWriteRefusal(why ?? '')
  }

  startWire(opts: WireOptions): void {
    if (this.wire) throw new VisError('native.wire', 'wire mode is already on', {})
    this.wire = opts
    // The parent's request ids name wire jobs; keep in-process job ids out of their way.
    this.nextJob = Math.max(this.nextJob, 2 ** 40)
    this.hold() // the socket keeps the process alive until it closes
    const limits = opts.limits
    if (
      limits &&
      !(
        Number.isSafeInteger(limits.maxFrameChars) &&
        limits.maxFrameChars > 0 &&
        Number.isInteger(limits.maxDepth) &&
        limits.maxDepth > 1
      )
    ) {
      throw new VisError('native.wire', 'wire limits are positive integers (maxDepth at least 2)', { limits })
    }
    const spinUs = opts.spinUs ?? 0
    if (!isSpinUs(spinUs)) {
      throw new VisError('native.wire', `spinUs is a whole number of microseconds from 0 to ${MAX_SPIN_US}`, {
        spinUs,
      })
    }
    this.addon.wireStart(opts.fd, opts.workOps, opts.handler.module, opts.handler.fn, { ...limits, spinUs })
  }

  // Writes one line (a reply, a notification) to the wire socket, serialized with C++'s writes.
  wireWrite(line: string): boolean {
    return this.addon.wireWrite(line)
  }

  get runningJobs(): number {
    return this.jobs.size
  }

  // Finalizes the interpreter (atexit handlers, flushing) once queued jobs finish.
  // Resolves to python3's exit status for finalization (0, or 120 if flushing failed).
  close(): Promise<number> {
    if (!this.closing) {
      this.closing = new Promise<number>((resolve) => {
        this.onClosed = resolve
      })
      this.hold()
      this.addon.submit(Kind.Finalize, ++this.nextJob, '', '', '')
    }
    return this.closing
  }

  private hold(): void {
    if (this.inFlight++ === 0) this.addon.ref()
  }

  private release(): void {
    if (--this.inFlight === 0) this.addon.unref()
  }

  private submit(kind: Kind, a: string, b: string, c: string): JobPromise<Outcome> {
    if (this.closing) {
      return Object.assign(
        Promise.reject(new VisError('native.closed', 'the Python runtime is closed', {})),
        {
          job: 0,
        },
      )
    }
    const id = ++this.nextJob
    const p = new Promise<Outcome>((resolve, reject) => this.jobs.set(id, { resolve, reject }))
    this.hold()
    this.addon.submit(kind, id, a, b, c)
    return Object.assign(p, { job: id })
  }

  /** @internal */
  handle(kind: number, job: number, call: number, a: string, b: string | [number, string][]): void {
    switch (kind) {
      case Ev.Result: {
        const pending = this.jobs.get(job)
        if (!pending) return
        this.jobs.delete(job)
        this.release()
        try {
          pending.resolve(OutcomeSchema.parse(JSON.parse(a)))
        } catch (err) {
          pending.reject(
            new VisError('native.bad-outcome', `unreadable job outcome: ${errorMessage(err)}`, { job }),
          )
        }
        return
      }
      case Ev.Output:
        for (const [stream, text] of b as [number, string][]) {
          const name: Stream = stream === 2 ? 'stderr' : 'stdout'
          for (const l of this.outputListeners) l(job, name, text)
        }
        return
      case Ev.HostCall:
        void this.hostCall(call, a, b as string)
        return
      case Ev.HostCancel:
        this.hostCalls
          .get(call)
          ?.abort(new VisError('native.host-cancelled', 'the host call was cancelled', { call }))
        this.hostCalls.delete(call)
        return
      case Ev.Closed:
        this.release()
        this.onClosed?.(Number(a))
        return
      case Ev.WireMessage:
        this.wire?.onMessage(a)
        return
      case Ev.WireClosed:
        this.release()
        this.wire?.onClose?.(a)
        return
    }
  }

  private async hostCall(call: number, name: string, argsJson: string): Promise<void> {
    const ctl = new AbortController()
    this.hostCalls.set(call, ctl)
    let reply: string
    try {
      if (!this.hostHandler) {
        throw new VisError('host.no-handler', `no host call handler is installed (called ${name})`, {})
      }
      reply = await this.hostHandler(name, argsJson, ctl.signal)
    } catch (err) {
      const code = err instanceof VisError ? err.code : 'host.error'
      reply = JSON.stringify({ ok: false, error: { code, message: errorMessage(err) } })
    }
    this.hostCalls.delete(call)
    if (!ctl.signal.aborted) this.addon.hostReply(call, reply)
  }
}

let current: Promise<PythonRuntime> | undefined

function parseVersion(v: string): string {
  return /^(\d+\.\d+\.\d+\S*)/.exec(v)?.[1] ?? v
}

// Fails before any native code runs when the tree cannot start (a bad home makes
// CPython dump its path config to fd 2 and refuse to initialise again).
function checkHome(dist: Distribution): void {
  if (dist.kind === 'build-tree') return
  const stdlib = join(dist.root, 'lib', `python${dist.minor}`)
  for (const f of [join(stdlib, 'os.py'), join(stdlib, 'encodings', '__init__.py'), dist.libpython]) {
    if (!existsSync(f)) {
      throw new VisError(
        'native.bad-home',
        `${dist.root} cannot be used as the Python home: ${f} is missing (re-stage it with \`vis runtime stage\`)`,
        { path: f },
      )
    }
  }
}

async function start(opts: LoadOptions): Promise<PythonRuntime> {
  const dist: Distribution = opts.dist ?? (await resolveDistribution(opts.minor ? { minor: opts.minor } : {}))
  if (opts.minor && dist.minor !== opts.minor) {
    throw new VisError(
      'native.version-mismatch',
      `asked for Python ${opts.minor} but the distribution is ${dist.minor}`,
      {
        path: dist.root,
      },
    )
  }
  runtimeAddonPath(dist.minor) // refuse a missing addon before loading anything
  checkHome(dist)
  const loader = loadLoader()
  try {
    loader.load(dist.libpython)
  } catch (err) {
    throw new VisError('native.load-failed', `cannot load ${dist.libpython}: ${errorMessage(err)}`, {
      path: dist.libpython,
    })
  }
  const version = parseVersion(loader.version())
  if (!version.startsWith(`${dist.minor}.`)) {
    throw new VisError(
      'native.version-mismatch',
      `${dist.libpython} is Python ${version}, but the distribution says ${dist.minor}; re-stage it`,
      { path: dist.libpython, version, minor: dist.minor },
    )
  }
  const addon = requireRuntime(dist.minor)
  const audit = opts.audit ?? true
  const rt = new PythonRuntime(addon, dist, version, audit)
  const sysPath = [...(opts.sysPath ?? []), ...(opts.guest === false ? [] : [guestDir])]
  return new Promise<PythonRuntime>((resolve, reject) => {
    let ready = false
    addon.start(
      {
        home: dist.kind === 'build-tree' ? '' : dist.root,
        distRoot: dist.root,
        executable: dist.executable,
        readRoots: [dist.root, ...sysPath.filter((p) => p !== '')],
        sysPath,
        argv: opts.argv ?? (opts.commandLine ? [] : ['']),
        capture: opts.capture ?? true,
        audit,
        cli: opts.commandLine ?? false,
      },
      (kind, job, call, a, b) => {
        if (ready) return rt.handle(kind, job, call, a, b)
        if (kind === Ev.Ready) {
          if (opts.commandLine) rt.commandLine = CommandLinePlanSchema.parse(JSON.parse(b as string))
          ready = true
          addon.unref()
          resolve(rt)
        } else if (kind === Ev.InitExit) {
          addon.unref()
          const status = Number(a)
          reject(
            new VisError('native.init-exit', `the command line ended start-up with status ${status}`, {
              status,
            }),
          )
        } else if (kind === Ev.InitError) {
          addon.unref()
          reject(
            new VisError(
              'native.init-failed',
              `Python ${version} failed to initialise from ${dist.root}: ${a}`,
              {
                path: dist.root,
              },
            ),
          )
        }
      },
    )
  })
}

// Starts the process's one interpreter (resolving the distribution unless given one).
// A second call returns the same runtime; asking for a different one throws.
export function loadPython(opts: LoadOptions = {}): Promise<PythonRuntime> {
  if (current) {
    return current.then((rt) => {
      if ((opts.minor && rt.minor !== opts.minor) || (opts.dist && opts.dist.root !== rt.distribution.root)) {
        throw new VisError(
          'native.already-loaded',
          `Python ${rt.version} from ${rt.distribution.root} is already loaded; one interpreter per process`,
          { path: rt.distribution.root },
        )
      }
      return rt
    })
  }
  const promise = start(opts)
  current = promise
  // Refusals before the interpreter thread started leave the process free to try again.
  promise.catch((err) => {
    if (!(err instanceof VisError && err.code === 'native.init-failed')) current = undefined
  })
  return promise
}
