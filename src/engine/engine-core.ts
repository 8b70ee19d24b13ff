import type { Drafts } from '../drafts/drafts.js'
import type { ExtensionRegistry } from '../extensions/index.js'
import type { Store } from '../persistence/index.js'
import type { SessionFactory } from '../sessions/session-factory.js'
import { VisError } from '../util/errors.js'
import type { Runtime } from './create-runtime.js'
import type { EventLog } from './event-log.js'
import type { ExecuteDeps } from './execute.js'
import { type Live, newLive } from './live.js'
import type { EngineMetrics } from './metrics.js'
import type { SessionOwnership } from './ownership.js'
import type { BlockView } from './schemas.js'
import type { WorkerDeps } from './worker-start.js'

// What the engine's modules (session-lifecycle.ts, block-queue.ts, session-worker.ts, ...) share:
// the store, the runtime and the in-memory state of the sessions this process has touched.
// The Engine class (engine.ts) builds one and delegates each method to a module.
export type EngineCore = {
  store: Store
  // Every session's worker (pool, jail, Session), with history or transient.
  factory: SessionFactory
  // The transient sessions over it (engine.runtime).
  runtime: Runtime
  log: EventLog
  metrics: EngineMetrics
  drafts: Drafts
  extensions: ExtensionRegistry | undefined
  lives: Map<string, Live>
  // Accepted blocks not finished yet, by id: their `done`.
  pending: Map<string, Promise<BlockView>>
  // What the modules this engine is split into need from it (src/engine/execute.ts,
  // worker-start.ts, events-bridge.ts).
  executeDeps: ExecuteDeps
  workerDeps: WorkerDeps
  // Set once close() began.
  closing: Promise<void> | undefined
  // Which sessions this process runs, among the processes sharing the home (SQLite only; a
  // cluster on PostgreSQL has its own leases, src/cluster).
  ownership: SessionOwnership | undefined
}

export type SessionRow = ReturnType<Store['sessions']['require']>

const notFound = (id: string) =>
  new VisError('session.not-found', `No session with id ${id}.`, { sessionId: id })

export function requireSession(core: EngineCore, id: string): SessionRow {
  const row = core.store.sessions.get(id)
  if (!row) throw notFound(id)
  return row
}

// What accepting a block needs of its session (that it exists, whether it is closed), read
// fresh every time (another process may close it) but without the whole row.
export function requireSessionState(core: EngineCore, id: string): Pick<SessionRow, 'id' | 'closedAt'> {
  const closedAt = core.store.sessions.closedAt(id)
  if (closedAt === undefined) throw notFound(id)
  return { id, closedAt }
}

// The stored session, refused with session.closed once it was closed.
export function refuseClosed(row: Pick<SessionRow, 'id' | 'closedAt'>): void {
  if (row.closedAt !== null) {
    throw new VisError('session.closed', `Session ${row.id} is closed; create a new session.`, {
      sessionId: row.id,
    })
  }
}

export function assertOpen(core: EngineCore): void {
  if (core.closing !== undefined) throw new VisError('engine.closed', 'The engine is shutting down.')
}

// Takes the session for this process before it runs anything in it (ownership.ts).
export function claim(core: EngineCore, id: string): void {
  core.ownership?.claim(id)
}

export function liveFor(core: EngineCore, id: string): Live {
  let live = core.lives.get(id)
  if (!live) {
    live = newLive(id)
    core.lives.set(id, live)
  }
  return live
}

export function forget(core: EngineCore, live: Live): void {
  live.off?.()
  if (core.lives.get(live.id) === live) core.lives.delete(live.id)
}
