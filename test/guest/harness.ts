// The one seam between the guest tests and whatever drives the guest runtime.
// By default every test goes through the real stack, black-box: createRuntime() →
// session.runBlock() → worker process → native addon → embedded CPython → vis_guest.
// VIS_GUEST_HARNESS=driver instead runs vis_guest in a plain CPython process
// (fixtures/driver.py provides `_vis` over JSON lines), to debug the guest alone.
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { guestRuntimeConfig, PROCESS_SURFACE } from '../../src/guest/index.js'
import { asTimeout } from '../../src/sessions/block-result.js'
import { createRuntime } from '../../src/sessions/create-runtime.js'
import { guestDir, packageRoot } from '../../src/util/home.js'

export type ToolFn = (...args: any[]) => unknown
export type ToolDef = { fn: ToolFn; doc?: string; signature?: string }
export type GuestError = {
  phase: string
  message: string
  line?: number
  column?: number
  excerpt?: string
  hints?: string[]
  flags?: string[]
}
export type Attachment = { name: string; media_type: string; size: number; path?: string; data_b64?: string }
export type Outcome = {
  stdout?: string
  result?: unknown
  error?: GuestError
  timedOut?: boolean
  attachments?: Attachment[]
  snapshot?: { version: number; items: Array<{ name: string; kind: string; source: string }> }
}
export type RunOptions = { session?: Record<string, unknown>; stdoutCap?: number; timeoutMs?: number }

export const SHELL_ON = PROCESS_SURFACE.shellOn
export const SHELL_OFF = PROCESS_SURFACE.shellOff

export type Guest = {
  readonly home: string
  readonly outbox: string
  readonly python: string
  // Every tool call the guest made, in order.
  readonly hostCalls: Array<{ name: string; args: unknown[] }>
  runBlock(code: string, opts?: RunOptions): Promise<Outcome>
  call<T = unknown>(fn: string, ...args: unknown[]): Promise<T>
  bind(name: string, fn: ToolFn, doc?: string, signature?: string): Promise<void>
  install(spec: Record<string, unknown>): Promise<void>
  // The host's setBinding: a function becomes a tool (`ns.method` joins a namespace), data crosses as JSON.
  setBinding(name: string, value: unknown, doc?: string, signature?: string): Promise<void>
  remove(name: string): Promise<void>
  interrupt(): void
  streamed(): string
  close(): Promise<void>
}

export type GuestOptions = {
  tools?: Record<string, ToolFn | ToolDef>
  // Merged into the install_runtime config (after the host's defaults).
  config?: Record<string, unknown>
}

function pythonMinor(): string {
  return process.env.VIS_PYTHON_VERSION ?? '3.11'
}

function toolDefs(opts: GuestOptions): Array<[string, ToolDef]> {
  return Object.entries(opts.tools ?? {}).map(([n, d]) => [n, typeof d === 'function' ? { fn: d } : d])
}

export function startGuest(opts: GuestOptions = {}): Promise<Guest> {
  return process.env.VIS_GUEST_HARNESS === 'driver' ? startDriverGuest(opts) : startSessionGuest(opts)
}

async function startSessionGuest(opts: GuestOptions): Promise<Guest> {
  // The session's root; the vis home lies beside it (no root may be the vis home or inside it).
  const home = mkdtempSync(join(tmpdir(), 'vis-guest-'))
  const outbox = join(home, 'outbox')
  mkdirSync(outbox)
  const visHome = mkdtempSync(join(tmpdir(), 'vis-guest-home-'))
  process.env.VIS_HOME = visHome
  const defs = toolDefs(opts)
  const rt = await createRuntime({ home: visHome, python: pythonMinor(), pool: { size: 0 } })
  const session = await rt.createSession({ roots: [home], shell: defs.some(([n]) => n === 'shell') })
  const hostCalls: Array<{ name: string; args: unknown[] }> = []
  let streamed = ''
  session.on('output', (ev) => {
    streamed += ev.data
  })
  // A Python exception from the guest API rejects; `type` names its class, as in driver mode.
  const callGuest = <T>(fn: string, ...args: unknown[]) =>
    (session.callGuest(fn, ...args) as Promise<T>).catch((e: Error) => {
      throw Object.assign(e, { type: /(?:^|raised )([A-Za-z_]\w*):/.exec(e.message)?.[1] })
    })
  await callGuest('install_runtime', { ...guestRuntimeConfig({ outbox }), ...opts.config })
  const bind = async (name: string, fn: ToolFn, doc = '', signature = '(*args)') => {
    // The session appends its tool context to the positional arguments.
    const run = (...a: unknown[]) => {
      const args = a.slice(0, -1)
      hostCalls.push({ name, args })
      return fn(...args)
    }
    await session.bind(name, run, { doc, signature })
  }
  for (const [name, d] of defs) await bind(name, d.fn, d.doc, d.signature)
  return {
    home,
    outbox,
    python: pythonMinor(),
    hostCalls,
    runBlock: async (code, o = {}) => {
      if (o.stdoutCap !== undefined) await callGuest('install_runtime', { stdout_cap: o.stdoutCap })
      try {
        const out = (await session.runBlock(code, {
          context: o.session ?? {},
          timeoutMs: o.timeoutMs,
        })) as Outcome
        // The session keeps the defs snapshot for persistence rather than returning it.
        return { ...out, snapshot: session.lastSnapshot as Outcome['snapshot'] }
      } finally {
        if (o.stdoutCap !== undefined) await callGuest('install_runtime', { stdout_cap: 1 << 20 })
      }
    },
    call: callGuest,
    bind,
    install: async (spec) => {
      await callGuest('install_tool', spec)
    },
    setBinding: (name, value, doc, signature) => {
      const fn =
        typeof value === 'function'
          ? (...a: unknown[]) => {
              hostCalls.push({ name, args: a.slice(0, -1) })
              return (value as ToolFn)(...a.slice(0, -1))
            }
          : value
      return session.setBinding(name, fn, { doc, signature })
    },
    remove: (name) => session.unbind(name),
    interrupt: () => {
      void session.interrupt()
    },
    streamed: () => streamed,
    close: async () => {
      await rt.close()
      rmSync(home, { recursive: true, force: true })
      rmSync(visHome, { recursive: true, force: true })
    },
  }
}

// The staged distribution when present; otherwise the machine's pyenv build of that minor.
export function pythonBinary(): string {
  const minor = pythonMinor()
  const staged = join(
    packageRoot,
    'cpython-dist',
    minor,
    'linux-x86_64-gnu',
    'python',
    'bin',
    `python${minor}`,
  )
  if (existsSync(staged)) return staged
  const pyenv = '/root/.pyenv/versions'
  const found = existsSync(pyenv) ? readdirSync(pyenv).find((v) => v.startsWith(`${minor}.`)) : undefined
  if (found) return join(pyenv, found, 'bin', `python${minor}`)
  throw new Error(`no Python ${minor}: stage cpython-dist/${minor} first`)
}

async function startDriverGuest(opts: GuestOptions): Promise<Guest> {
  const home = mkdtempSync(join(tmpdir(), 'vis-guest-'))
  const outbox = join(home, 'outbox')
  mkdirSync(outbox)
  const python = pythonBinary()
  const child: ChildProcess = spawn(
    python,
    ['-I', '-S', '-u', join(packageRoot, 'test/guest/fixtures/driver.py'), guestDir],
    {
      env: { VIS_HOME: home, PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  )
  const tools = new Map<string, ToolFn>()
  const hostCalls: Array<{ name: string; args: unknown[] }> = []
  const waiting = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>()
  let nextId = 0
  let streamed = ''
  let stderr = ''
  let exited = false
  child.stderr?.on('data', (d) => {
    stderr += d
  })
  const send = (msg: unknown) => child.stdin?.write(`${JSON.stringify(msg)}\n`)
  const ready = new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => {
      exited = true
      const err = new Error(`guest driver exited (${code}): ${stderr}`)
      reject(err)
      for (const w of waiting.values()) w.reject(err)
    })
    const lines = createInterface({ input: child.stdout! })
    lines.on('line', (line) => {
      const msg = JSON.parse(line)
      if (msg.op === 'ready') resolve()
      else if (msg.op === 'output') streamed += msg.data
      else if (msg.op === 'host') void answerHost(msg)
      else {
        const w = waiting.get(msg.id)
        waiting.delete(msg.id)
        if (msg.ok) w?.resolve(msg.value)
        else w?.reject(Object.assign(new Error(msg.error.message), msg.error))
      }
    })
  })
  async function answerHost(msg: { id: number; name: string; args: unknown[] }) {
    hostCalls.push({ name: msg.name, args: msg.args })
    const fn = tools.get(msg.name)
    try {
      if (!fn) throw new Error(`no tool named ${msg.name}`)
      const value = await fn(...msg.args)
      send({ host: msg.id, ok: true, value: value ?? null })
    } catch (e) {
      send({ host: msg.id, ok: false, error: { code: 'tool.failed', message: (e as Error).message } })
    }
  }
  const call = <T>(fn: string, ...args: unknown[]): Promise<T> => {
    if (exited) return Promise.reject(new Error('guest driver has exited'))
    const id = ++nextId
    return new Promise<T>((resolve, reject) => {
      waiting.set(id, { resolve, reject })
      send({ id, op: 'call', fn, args })
    })
  }
  const install = async (spec: Record<string, unknown>) => {
    await call('install_tool', spec)
  }
  const bind = async (name: string, fn: ToolFn, doc = '', signature = '(*args)') => {
    tools.set(name, fn)
    await install({ name, doc, signature, kind: 'tool' })
  }
  await ready
  await call('install_runtime', {
    policy: { roots: [home], network: { enabled: false }, shell: 'shell' in (opts.tools ?? {}) },
    ...guestRuntimeConfig({ outbox }),
    ...opts.config,
  })
  for (const [name, d] of toolDefs(opts)) await bind(name, d.fn, d.doc, d.signature)
  // The driver stands in for the session's namespace bookkeeping with a direct install.
  const namespaces = new Map<string, Map<string, { name: string; doc: string; signature: string }>>()
  let lastSnapshot: Outcome['snapshot']
  return {
    home,
    outbox,
    python,
    hostCalls,
    runBlock: async (code, o = {}) => {
      // The host's timer: interrupt, then the host's own rewrite of the outcome.
      let fired = false
      const timer =
        o.timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              fired = true
              child.kill('SIGINT')
            }, o.timeoutMs)
      try {
        const got = await call<Outcome>('run_block', {
          code,
          session: o.session ?? {},
          stdout_cap: o.stdoutCap,
        })
        // The guest sends its snapshot only when it changed; the host keeps the last one.
        if (got.snapshot !== undefined) lastSnapshot = got.snapshot
        const out = { ...got, snapshot: lastSnapshot }
        return fired && out.error?.phase === 'interrupted'
          ? (asTimeout(out, o.timeoutMs ?? 0) as Outcome)
          : out
      } finally {
        clearTimeout(timer)
      }
    },
    call,
    bind,
    install,
    setBinding: async (name, value, doc = '', signature = '(*args)') => {
      const dot = name.indexOf('.')
      if (typeof value !== 'function') return install({ name, kind: 'data', value })
      if (dot < 0) return bind(name, value as ToolFn, doc, signature)
      const ns = name.slice(0, dot)
      const methods = namespaces.get(ns) ?? new Map()
      methods.set(name.slice(dot + 1), { name: name.slice(dot + 1), doc, signature })
      namespaces.set(ns, methods)
      tools.set(name, value as ToolFn)
      return install({ name: ns, kind: 'namespace', methods: [...methods.values()] })
    },
    remove: async (name) => {
      tools.delete(name)
      await call('remove_tool', name)
    },
    interrupt: () => {
      child.kill('SIGINT')
    },
    streamed: () => streamed,
    close: async () => {
      if (!exited) {
        const gone = new Promise((r) => child.once('exit', r))
        child.stdin?.end()
        await gone
      }
      rmSync(home, { recursive: true, force: true })
    },
  }
}

// The outcome's error, asserting there is one (and narrowing its type for the test).
export function errorOf(out: Outcome): GuestError {
  if (!out.error) throw new Error(`expected an error, got ${JSON.stringify(out)}`)
  return out.error
}
