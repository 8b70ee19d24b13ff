import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import { homeMasksFor, pinRoots, protectHome } from '../confinement/root-guard.js'
import { guestRuntimeConfig } from '../guest/index.js'
import { MAX_SPIN_US } from '../native/wire-spin.js'
import { defaultTools } from '../tools/index.js'
import type { Tool } from '../tools/types.js'
import { VisError } from '../util/errors.js'
import { visHome } from '../util/home.js'
import { WarmPool } from '../worker/pool.js'
import { pythonHome } from '../worker/python-home.js'
import type { Worker } from '../worker/worker.js'
import { normalizePolicy, WorkerPolicy } from '../worker/worker-policy.js'
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

export const SessionOptions = WorkerPolicy.extend({ id: z.string().min(1).max(128).optional() })
export type SessionOptions = z.input<typeof SessionOptions>

export type Runtime = {
  readonly home: string
  // Whether sessions run in the OS jail (false only for an explicitly unconfined runtime).
  readonly confined: boolean
  createSession(opts?: SessionOptions): Promise<Session>
  session(id: string): Session | undefined
  sessions(): Session[]
  // Every live worker process: sessions' and the warm pool's.
  workerPids(): number[]
  // Waits until the pool has finished starting workers.
  poolSettled(): Promise<void>
  close(): Promise<void>
}

export async function createRuntime(input: RuntimeOptions = {}): Promise<Runtime> {
  const opts = RuntimeOptions.parse(input)
  const home = visHome(opts.home)
  // No sandbox of this process may reach this home's database, logs or extensions.
  protectHome(home)
  const pool = new WarmPool({
    home,
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
  const live = new Map<string, Session>()
  let closed = false

  async function createSession(sopts: SessionOptions = {}): Promise<Session> {
    if (closed) throw new VisError('runtime.closed', 'the runtime is closed; create a new one')
    const parsed = SessionOptions.parse(sopts)
    const { id: wantedId, ...policyInput } = parsed
    const id = wantedId ?? `s-${randomUUID().slice(0, 8)}`
    if (live.has(id))
      throw new VisError('session.exists', `a session with id ${id} is already open`, { sessionId: id })
    const policy = normalizePolicy(policyInput)
    // The roots are pinned to what they are now: a root another sandbox later swaps for a link
    // (or renames away) is refused at every jail and by the host tools (policy.root-changed).
    if (!policy.pins && policy.roots.length > 0 && opts.confine !== false) {
      policy.pins = pinRoots(policy.roots, { within: policy.within }, { sessionId: id, op: 'create-session' })
    }
    try {
      return await openSession(id, policy)
    } finally {
      // Refilled once this session is set up (or has failed to be), never beside its setup:
      // a worker's start (a fork, the jail, a Node start-up) takes the CPU the setup needs.
      setImmediate(() => {
        // A draft's overlay belongs to one session: no warm worker is kept for it.
        if (!closed && !policy.overlay) pool.prewarm(policy)
      })
    }
  }

  async function openSession(id: string, policy: WorkerPolicy): Promise<Session> {
    const toolsFor = opts.defaultTools
      ? defaultTools({
          sessionId: id,
          roots: policy.roots,
          shell: policy.shell,
          hidden: [...(policy.hidden ?? []), ...homeMasksFor(policy.roots)],
          pins: policy.pins,
          ...(policy.mode ? { mode: policy.mode } : {}),
          ...(policy.overlay ? { overlayRoot: policy.overlay.root } : {}),
        })
      : Promise.resolve([])
    toolsFor.catch(() => undefined)
    const worker: Worker = (await pool.acquire(policy)).worker
    if (closed) {
      await worker.close()
      throw new VisError('runtime.closed', 'the runtime closed while the session was starting')
    }
    // Processes the tools start (shell, git) run in a jail built from this session's
    // policy, unless the runtime runs without the OS jail at all.
    const jail =
      opts.confine === false
        ? undefined
        : toolJail({ sessionId: id, policy, pythonRoot: (await pythonHome(opts.python)).root })
    const session = new Session({
      id,
      worker,
      roots: policy.roots,
      spawn: jail?.spawn,
      maxConcurrentHostCalls: opts.maxConcurrentHostCalls,
      graceMs: opts.graceMs,
      // The same spawn policy as the first worker; the pool refills after each take.
      respawn: async () => {
        if (closed) throw new VisError('runtime.closed', 'the runtime is closed')
        try {
          return (await pool.acquire(policy)).worker
        } finally {
          setImmediate(() => {
            if (!closed) pool.prewarm(policy)
          })
        }
      },
      onNetwork: (net) => jail?.setNetwork(net),
      onDispose: async (s) => {
        if (live.get(s.id) === s) live.delete(s.id)
        // After the session's resources: the tool network outlives none of its processes.
        await jail?.dispose()
      },
    })
    live.set(id, session)
    try {
      const tools = [...(await toolsFor), ...(opts.tools ?? [])]
      await Promise.all(tools.map((t) => session.bindTool(t)))
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

  return {
    home,
    confined: opts.confine !== false,
    createSession,
    session: (id) => live.get(id),
    sessions: () => [...live.values()],
    workerPids: () => [
      ...[...live.values()].filter((s) => s.state !== 'disposed').map((s) => s.pid),
      ...pool.pids(),
    ],
    async poolSettled() {
      // Refills are scheduled with setImmediate after each session's setup.
      await new Promise((r) => setImmediate(r))
      await pool.settled()
    },
    async close() {
      if (closed) return
      closed = true
      await Promise.allSettled([...live.values()].map((s) => s.dispose()))
      await pool.close()
    },
  }
}
