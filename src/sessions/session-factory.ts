import { z } from 'zod'
import { protectHome } from '../confinement/protected-homes.js'
import { guestRuntimeConfig } from '../guest/index.js'
import { MAX_SPIN_US } from '../native/wire-spin.js'
import type { NetworkAck } from '../protocol/parent-requests.js'
import { defaultTools } from '../tools/index.js'
import type { Tool } from '../tools/types.js'
import { VisError } from '../util/errors.js'
import { visHome } from '../util/home.js'
import { WarmPool } from '../worker/pool.js'
import { pythonHome } from '../worker/python-home.js'
import type { Worker } from '../worker/worker.js'
import { WorkerPolicy } from '../worker/worker-policy.js'
import { MAX_GRACE_MS } from './deadline.js'
import { Session } from './session.js'
import { toolJail } from './tool-jail.js'

export const RuntimeOptions = z
  .object({
    home: z.string().optional(),
    python: z
      .string()
      .regex(/^3\.\d+$/, 'a Python minor such as "3.11"')
      .optional(),
    pool: z.object({ size: z.number().int().min(0).max(64) }).optional(),
    interruptAckMs: z.number().int().positive().optional(),
    // Between interrupting a block (its timeout, or interrupt()) and killing its worker, which
    // a fresh one then replaces; at most 2 s (default 1.5 s).
    graceMs: z.number().int().min(0).max(MAX_GRACE_MS).optional(),
    // How long an idle worker polls its socket before sleeping, in µs (default 100, or
    // VIS_WIRE_SPIN_US): lower latency for a little CPU after each message; 0 turns it off.
    spinUs: z.number().int().min(0).max(MAX_SPIN_US).optional(),
    // false starts workers without the OS jail (the audit hook still applies): for
    // development on machines without the jail's layers, never for untrusted code.
    confine: z.boolean().optional(),
    // 'permissive': the audit hook grants everything it can, leaving the kernel layers
    // alone in the way. Only for the attack suite's proof that no promise rests on the hook.
    auditPolicy: z.enum(['enforce', 'permissive']).optional(),
    maxConcurrentHostCalls: z.number().int().positive().optional(),
    // The file tools (and git, and shell when a session turns it on) in every session.
    defaultTools: z.boolean().default(true),
    // More tools bound into every new session.
    tools: z.array(z.custom<Tool>((t) => typeof t === 'object' && t !== null && 'run' in t)).optional(),
  })
  .strict()
export type RuntimeOptions = z.input<typeof RuntimeOptions>
type ParsedRuntimeOptions = z.output<typeof RuntimeOptions>

export const SessionOptions = WorkerPolicy.extend({ id: z.string().min(1).max(128).optional() })
export type SessionOptions = z.input<typeof SessionOptions>

// The worker side of every session, with or without history: the warm pool, the jail its tools
// run in, and the Session (blocks, deadlines, interrupts, a killed worker's replacement with its
// definitions restored) made from a policy the engine resolved (src/engine/session-open.ts).
// It decides nothing about the policy: which roots, which pins and which tools are the engine's.
export class SessionFactory {
  readonly home: string
  // Whether sessions run in the OS jail (false only for an explicitly unconfined runtime).
  readonly confined: boolean
  private readonly pool: WarmPool
  private readonly live = new Map<string, Session>()
  private closedNow = false

  constructor(private readonly opts: ParsedRuntimeOptions) {
    this.home = visHome(opts.home)
    this.confined = opts.confine !== false
    // No sandbox of this process may reach this home's database, logs or extensions.
    protectHome(this.home)
    this.pool = new WarmPool({
      home: this.home,
      python: opts.python,
      size: opts.pool?.size ?? 1,
      interruptAckMs: opts.interruptAckMs,
      spinUs: opts.spinUs,
      confine: opts.confine,
      auditPolicy: opts.auditPolicy,
      runtimeConfig: guestRuntimeConfig(),
      // The default tools' specs depend only on the spawn policy: install them while the
      // worker waits in the pool, so taking it costs no round trips.
      prepare: opts.defaultTools
        ? async (worker) => {
            const tools = await defaultTools({ roots: worker.policy.roots, shell: worker.policy.shell })
            await Promise.all(
              tools.map(async (t) => {
                const spec = { name: t.name, doc: t.doc, signature: t.signature }
                await worker.call('install-tool', { spec })
                worker.preinstalled.set(t.name, JSON.stringify(spec))
              }),
            )
          }
        : undefined,
    })
  }

  get closed(): boolean {
    return this.closedNow
  }

  // Refuses an id already open here (before any work is done for it).
  assertFree(id: string): void {
    if (this.closedNow) throw new VisError('runtime.closed', 'the runtime is closed; create a new one')
    if (this.live.has(id))
      throw new VisError('session.exists', `a session with id ${id} is already open`, { sessionId: id })
  }

  // A session for a resolved policy: a worker from the pool, its tool jail, then `tools` bound.
  // `onNetwork` is the owner's part of a network tightening (the engine stores it), after the
  // worker and the tool jail took it and before setNetwork reports it done.
  async open(
    id: string,
    policy: WorkerPolicy,
    tools: Promise<Tool[]>,
    hooks: { onNetwork?: (net: NetworkAck) => void } = {},
  ): Promise<Session> {
    this.assertFree(id)
    tools.catch(() => undefined)
    try {
      return await this.openNow(id, policy, tools, hooks)
    } finally {
      // Refilled once this session is set up (or has failed to be), never beside its setup:
      // a worker's start (a fork, the jail, a Node start-up) takes the CPU the setup needs.
      setImmediate(() => {
        // A draft's overlay belongs to one session: no warm worker is kept for it.
        if (!this.closedNow && !policy.overlay) this.pool.prewarm(policy)
      })
    }
  }

  private async openNow(
    id: string,
    policy: WorkerPolicy,
    tools: Promise<Tool[]>,
    hooks: { onNetwork?: (net: NetworkAck) => void },
  ): Promise<Session> {
    const { opts, pool } = this
    const worker: Worker = (await pool.acquire(policy)).worker
    if (this.closedNow) {
      await worker.close()
      throw new VisError('runtime.closed', 'the runtime closed while the session was starting')
    }
    // Processes the tools start (shell, git) run in a jail built from this session's
    // policy, unless the runtime runs without the OS jail at all.
    const jail = this.confined
      ? toolJail({ sessionId: id, policy, pythonRoot: (await pythonHome(opts.python)).root })
      : undefined
    const session = new Session({
      id,
      worker,
      roots: policy.roots,
      spawn: jail?.spawn,
      maxConcurrentHostCalls: opts.maxConcurrentHostCalls,
      graceMs: opts.graceMs,
      // The same spawn policy as the first worker; the pool refills after each take.
      respawn: async () => {
        if (this.closedNow) throw new VisError('runtime.closed', 'the runtime is closed')
        try {
          return (await pool.acquire(policy)).worker
        } finally {
          setImmediate(() => {
            if (!this.closedNow) pool.prewarm(policy)
          })
        }
      },
      onNetwork: (net) => {
        jail?.setNetwork(net)
        hooks.onNetwork?.(net)
      },
      onDispose: async (s) => {
        if (this.live.get(s.id) === s) this.live.delete(s.id)
        // After the session's resources: the tool network outlives none of its processes.
        await jail?.dispose()
      },
    })
    this.live.set(id, session)
    try {
      await Promise.all((await tools).map((t) => session.bindTool(t)))
      // A preinstalled tool this session does not have (the workspace stopped being a git
      // repository since) must not linger in the guest.
      await Promise.all([...worker.preinstalled.keys()].map((name) => session.unbind(name)))
      worker.preinstalled.clear()
    } catch (err) {
      await session.dispose()
      throw err
    }
    return session
  }

  session(id: string): Session | undefined {
    return this.live.get(id)
  }

  sessions(): Session[] {
    return [...this.live.values()]
  }

  // Every live worker process: sessions' and the warm pool's.
  workerPids(): number[] {
    return [
      ...[...this.live.values()].filter((s) => s.state !== 'disposed').map((s) => s.pid),
      ...this.pool.pids(),
    ]
  }

  // Waits until the pool has finished starting workers.
  async poolSettled(): Promise<void> {
    // Refills are scheduled with setImmediate after each session's setup.
    await new Promise((r) => setImmediate(r))
    await this.pool.settled()
  }

  async close(): Promise<void> {
    if (this.closedNow) return
    this.closedNow = true
    await Promise.allSettled([...this.live.values()].map((s) => s.dispose()))
    await this.pool.close()
  }
}
