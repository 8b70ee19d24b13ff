import type { Check } from '../confinement/probe.js'
import type { Drafts } from '../drafts/drafts.js'
import type { ExtensionRegistry } from '../extensions/index.js'
import type { Store } from '../persistence/index.js'
import type { JsonValue } from '../persistence/json.js'
import type { Session } from '../sessions/session.js'
import type { SessionOptions } from '../sessions/session-factory.js'
import { type AttachmentPieces, openAttachment, readAttachment } from './attachment-read.js'
import {
  cancelBlock,
  exclusive,
  getBlock,
  type SubmittedBlock,
  sessionBlock,
  submitBlock,
} from './block-queue.js'
import type { Runtime } from './create-runtime.js'
import { assertOpen, type EngineCore, requireSession, requireSessionState } from './engine-core.js'
import { extensionChecks, reloadExtensions } from './engine-extensions.js'
import { engineHealth } from './engine-health.js'
import { closeEngine, type EngineParts, startEngine } from './engine-lifecycle.js'
import type { EngineOptions } from './engine-options.js'
import { wireCore } from './engine-wiring.js'
import type { EventListener } from './event-log.js'
import { interrupt } from './interrupt.js'
import type { EngineMetrics } from './metrics.js'
import { SessionOwnership } from './ownership.js'
import type {
  AttachmentView,
  BlockView,
  CreateSessionBody,
  EventType,
  ExtensionList,
  InterruptResult,
  ListSessionsQuery,
  RunBlockBody,
  SessionDetail,
  SessionDetailQuery,
  SessionView,
  SessionViewQuery,
} from './schemas.js'
import {
  abandonLeftovers,
  closeSession,
  createChildSession,
  createSession,
  getSession,
  listSessions,
  listSessionsPage,
  ownedElsewhere,
  sessionPage,
  sessionResources,
  sessionSummary,
  sessionView,
} from './session-lifecycle.js'
import { dropWorker, liveSession, runtimeSession, stopWorker } from './session-worker.js'
import { extensionList } from './views.js'

export type { SubmittedBlock } from './block-queue.js'
export type { EngineOptions } from './engine-options.js'

// The one engine behind the library and the HTTP API: sessions with their workers (the
// runtime) and their durable history (the store). Every rule lives in the modules beside it,
// one concern each (session-lifecycle.ts, block-queue.ts, interrupt.ts, session-worker.ts,
// ...), over the shared EngineCore; this class is the public surface. The HTTP layer only
// validates, calls and serialises.
export class Engine {
  readonly home: string
  readonly bindAddress: string | undefined
  readonly metrics: EngineMetrics
  readonly abandonedAtStart: number
  // Sessions' drafts (src/drafts): an isolated, reviewable copy of the primary root.
  readonly drafts: Drafts
  private readonly core: EngineCore
  private readonly startedAt = Date.now()
  // Work of other parts over this engine (the agent's turns) to end before the workers stop.
  private readonly closeHooks: Array<() => Promise<void>> = []

  readonly store: Store
  // The engine's transient sessions: no history, the pinned createRuntime surface (createSession,
  // session, sessions, workerPids), over the same session factory as the sessions with history.
  readonly runtime: Runtime
  // The trusted Python extensions; one registry per engine.
  readonly extensions: ExtensionRegistry | undefined

  constructor(
    parts: EngineParts,
    readonly options: EngineOptions,
  ) {
    const { store } = parts
    this.store = store
    this.runtime = parts.runtime
    this.extensions = parts.extensions
    this.home = store.home
    this.bindAddress = options.bindAddress
    this.core = wireCore(parts, options)
    this.drafts = this.core.drafts
    this.metrics = this.core.metrics
    // On PostgreSQL other nodes' blocks are running right now: a node closes only what it takes
    // over from a dead one (leases, store.blocks.abandonRunningIn), never everything at start.
    // On SQLite other processes may share the home: each owns the sessions it runs, and only
    // what no live process owns is closed (ownership.ts).
    if (store.dialect === 'sqlite') {
      const core = this.core
      core.ownership = new SessionOwnership(
        store.leases,
        store.home,
        {
          interrupt: (r) =>
            interrupt(core, r.sessionId, r.blockId === undefined ? {} : { blockId: r.blockId }),
          close: (r) => closeSession(core, r.sessionId),
        },
        (id) => void dropWorker(core, id),
      )
    }
    this.abandonedAtStart = store.dialect === 'postgres' ? 0 : abandonLeftovers(this.core)
  }

  // ---- sessions (session-lifecycle.ts) ----

  // `within`: where the roots must resolve (an MCP server's own roots); the engine's allowRoots
  // when unset.
  // opts.pins: identities the caller pinned earlier (an MCP server's roots at its start); a root
  // among them that names another directory now is refused (policy.root-changed).
  async createSession(
    body: CreateSessionBody = {},
    opts: { within?: string[]; pins?: Readonly<Record<string, string>> } = {},
  ): Promise<SessionView> {
    return createSession(this.core, body, opts)
  }

  // A sub_loop child of a session this process runs: the parent's policy, its roots (or the
  // narrower `roots`, each inside one of them) pinned from the parent's pinned roots, so a
  // parent root swapped since the parent's creation refuses the child (policy.root-changed). A
  // parent working in a draft lends it to the child.
  async createChildSession(
    parentId: string,
    body: { roots?: string[]; title?: string },
  ): Promise<SessionView> {
    return createChildSession(this.core, parentId, body)
  }

  // Whether another live process on this home runs the session now (it owns it: ownership.ts).
  ownedElsewhere(sessionId: string): boolean {
    return ownedElsewhere(this.core, sessionId)
  }

  listSessions(query: ListSessionsQuery = {}): SessionView[] {
    return listSessions(this.core, query)
  }

  // A page of sessions bounded in bytes as sent (GET /v1/sessions).
  listSessionsPage(query: ListSessionsQuery = {}): { sessions: SessionView[]; next_offset?: number } {
    return listSessionsPage(this.core, query)
  }

  // With format 'display' each block also carries its code formatted for people; the stored
  // code is never changed.
  getSession(id: string, query: SessionDetailQuery = {}): SessionDetail {
    return getSession(this.core, id, query)
  }

  sessionView(id: string): SessionView {
    return sessionView(this.core, id)
  }

  // The session with its last blocks, each cut to a bounded size (what the HTTP API answers).
  sessionSummary(id: string, query: SessionViewQuery = {}): SessionDetail {
    return sessionSummary(this.core, id, query)
  }

  // The same, with what the answer may still take in bytes (for `?format=display`).
  sessionPage(id: string, query: SessionViewQuery = {}): { detail: SessionDetail; spareBytes: number } {
    return sessionPage(this.core, id, query)
  }

  // A session's block count and attachment metadata, read without any block's output (MCP).
  sessionResources(
    id: string,
    page?: { offset: number; limit: number },
  ): ReturnType<typeof sessionResources> {
    return sessionResources(this.core, id, page)
  }

  // Closing keeps the history; the worker goes, a running block ends with an error.
  async closeSession(id: string): Promise<SessionView> {
    return closeSession(this.core, id)
  }

  // A transient session: the engine's policy resolution, pool, jail, deadlines and interrupts,
  // but no rows and no events (nothing of it outlives this process); its blocks run straight on
  // the returned Session. What createRuntime's createSession returns.
  async createTransientSession(opts: SessionOptions = {}): Promise<Session> {
    assertOpen(this.core)
    return this.runtime.createSession(opts)
  }

  // ---- blocks (block-queue.ts, interrupt.ts) ----

  // iterationId: the agent turn's iteration the block belongs to (src/agent).
  async submitBlock(
    sessionId: string,
    body: RunBlockBody,
    opts: { idempotencyKey?: string; iterationId?: string } = {},
  ): Promise<SubmittedBlock> {
    return submitBlock(this.core, sessionId, body, opts)
  }

  // Cancels a block that has not started. A running block is interrupted instead (interrupt()).
  cancelBlock(sessionId: string, blockId: string): BlockView {
    return cancelBlock(this.core, sessionId, blockId)
  }

  // A session's block, with its live status (queued or running, while not done).
  sessionBlock(sessionId: string, blockId: string): BlockView {
    return sessionBlock(this.core, sessionId, blockId)
  }

  // Submits and waits for the outcome.
  async runBlock(
    sessionId: string,
    body: RunBlockBody,
    opts: { idempotencyKey?: string } = {},
  ): Promise<{ block: BlockView; replayed: boolean }> {
    const s = await this.submitBlock(sessionId, body, opts)
    return { block: await s.done, replayed: s.replayed }
  }

  getBlock(id: string): BlockView {
    return getBlock(this.core, id)
  }

  // Interrupts the running block; a named block that is not running is left alone (and
  // cancelled if it is still queued).
  async interrupt(sessionId: string, opts: { blockId?: string } = {}): Promise<InterruptResult> {
    return interrupt(this.core, sessionId, opts)
  }

  attachment(sessionId: string, attachmentId: string): { attachment: AttachmentView; data: Buffer } {
    return readAttachment(this.core, sessionId, attachmentId)
  }

  // The same attachment read piece by piece, for an answer (close it when done).
  attachmentPieces(sessionId: string, attachmentId: string): AttachmentPieces {
    return openAttachment(this.core, sessionId, attachmentId)
  }

  // ---- workers (session-worker.ts) ----

  // The session's runtime session, started or reopened as needed (the agent loop's tool specs
  // and tool gate).
  async runtimeSession(sessionId: string): Promise<Session> {
    return runtimeSession(this.core, sessionId)
  }

  // The session's worker if one runs in this process now (none is started for it).
  liveSession(sessionId: string): Session | undefined {
    return liveSession(this.core, sessionId)
  }

  // The id of the block running in the session now, if any.
  runningBlock(sessionId: string): string | undefined {
    return this.core.lives.get(sessionId)?.currentBlock
  }

  // Stops the session's worker without closing the session (a cluster node that lost its lease).
  async dropWorker(id: string): Promise<void> {
    return dropWorker(this.core, id)
  }

  // Ends the session's worker once its blocks are done, and with it every thread and process
  // they left running; the session stays (the next block starts a fresh worker). A review does
  // this before showing the diff, so nothing the guest left behind rewrites the draft after.
  async stopWorker(id: string, reason: string): Promise<void> {
    requireSession(this.core, id)
    await exclusive(this.core, id, () => stopWorker(this.core, id, reason))
  }

  // A session's draft: create(label), blank(label), diff(), apply(options?), abandon(why?), state().
  draft(sessionId: string) {
    requireSession(this.core, sessionId)
    return this.drafts.for(sessionId)
  }

  // ---- events ----

  // Appends an event of another part (the agent's turn events) to the session's log and SSE.
  emit(sessionId: string, type: EventType, data: JsonValue): void {
    this.core.log.append(sessionId, type, data)
  }

  // Live events of one session, in seq order. Replay what came before with replayEvents()
  // in the same tick to miss nothing.
  subscribe(sessionId: string, fn: EventListener): () => void {
    // That it exists, without reading and decoding its row: MCP subscribes once per block.
    requireSessionState(this.core, sessionId)
    return this.core.log.subscribe(sessionId, fn)
  }

  // Live listeners of a session's events (open SSE streams among them).
  subscriberCount(sessionId: string): number {
    return this.core.log.listenerCount(sessionId)
  }

  replayEvents(sessionId: string, afterSeq = 0, limit = 1000) {
    requireSession(this.core, sessionId)
    return this.core.log.replay(sessionId, afterSeq, limit)
  }

  // ---- service (engine-health.ts, engine-extensions.ts, engine-lifecycle.ts) ----

  // Whether close() has begun: what fails from then on fails because of it (src/http/shutdown.ts).
  get closing(): boolean {
    return this.core.closing !== undefined
  }

  health(opts: { revealPaths?: boolean } = {}) {
    return engineHealth(
      this.core,
      { home: this.home, bindAddress: this.bindAddress, startedAt: this.startedAt },
      opts,
    )
  }

  metricsText(): string {
    return this.metrics.registry.render()
  }

  listExtensions(): ExtensionList {
    return extensionList(this.extensions)
  }

  async reloadExtensions(): Promise<ExtensionList> {
    return reloadExtensions(this.core)
  }

  extensionChecks(): Check[] {
    return extensionChecks(this.extensions)
  }

  onClose(hook: () => Promise<void>): void {
    this.closeHooks.push(hook)
  }

  close(): Promise<void> {
    return closeEngine(this.core, this.closeHooks)
  }
}

export async function createEngine(options: EngineOptions = {}): Promise<Engine> {
  return startEngine(options, (parts) => new Engine(parts, options))
}
