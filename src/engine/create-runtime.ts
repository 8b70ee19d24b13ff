import { randomUUID } from 'node:crypto'
import { homeMasksFor } from '../confinement/root-guard.js'
import type { Session } from '../sessions/session.js'
import { RuntimeOptions, SessionFactory, SessionOptions } from '../sessions/session-factory.js'
import type { Tool } from '../tools/types.js'
import { VisError } from '../util/errors.js'
import { hostToolsFor, resolvePolicy } from './session-open.js'

// The engine's transient sessions, and createRuntime → createSession → runBlock, the pinned
// simple path, as a thin facade over them. A transient session is an engine session without
// history: no session, block or event rows, nothing durable, so a block costs what the Session
// itself costs (bench/runtime-vs-engine.js). Its policy, pins, host tools, worker pool, jail,
// deadlines, interrupts and a replaced worker's restored definitions come from the same code as
// the engine's sessions with history (session-open.ts, src/sessions/session-factory.ts).

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

// What every transient session of a runtime gets besides its policy's.
// `rootedOnly`: host tools only for a session with roots, as the engine's sessions with history
// get them (createRuntime binds them always, and refuses a rootless session with tool.no-roots).
export type TransientTools = { defaultTools: boolean; rootedOnly?: boolean; tools?: Tool[] }

// A transient session: `s-` and 8 hex digits unless the caller names it.
export async function openTransientSession(
  factory: SessionFactory,
  with_: TransientTools,
  input: SessionOptions = {},
): Promise<Session> {
  if (factory.closed) throw new VisError('runtime.closed', 'the runtime is closed; create a new one')
  const { id: wantedId, ...policyInput } = SessionOptions.parse(input)
  const id = wantedId ?? `s-${randomUUID().slice(0, 8)}`
  factory.assertFree(id)
  // The roots are pinned to what they are now: a root another sandbox later swaps for a link
  // (or renames away) is refused at every jail and by the host tools (policy.root-changed).
  const policy = resolvePolicy(policyInput, id, { pin: factory.confined })
  const hidden = [...(policy.hidden ?? []), ...homeMasksFor(policy.roots)]
  const bindHost = with_.defaultTools && !(with_.rootedOnly && policy.roots.length === 0)
  const host = bindHost ? hostToolsFor(id, policy, hidden) : Promise.resolve([])
  const tools = host.then((t) => [...t, ...(with_.tools ?? [])])
  return factory.open(id, policy, tools)
}

// The Runtime surface over an engine's session factory (an engine's own is `engine.runtime`).
export function runtimeOver(factory: SessionFactory, with_: TransientTools): Runtime {
  return {
    home: factory.home,
    confined: factory.confined,
    createSession: (opts) => openTransientSession(factory, with_, opts),
    session: (id) => factory.session(id),
    sessions: () => factory.sessions(),
    workerPids: () => factory.workerPids(),
    poolSettled: () => factory.poolSettled(),
    close: () => factory.close(),
  }
}

export async function createRuntime(input: RuntimeOptions = {}): Promise<Runtime> {
  const opts = RuntimeOptions.parse(input)
  return runtimeOver(new SessionFactory(opts), opts)
}
