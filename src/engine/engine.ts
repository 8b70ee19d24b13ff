import { randomUUID } from 'node:crypto'
import { resolve } from 'node:path'
import type { Check } from '../confinement/probe.js'
import { Drafts } from '../drafts/drafts.js'
import { clearDraftView } from '../drafts/view.js'
import { closeRegistrationWorkers, ExtensionRegistry, warningChecks } from '../extensions/index.js'
import { formatPythonForDisplay } from '../format/index.js'
import type { McpServersInput } from '../mcp/client/config.js'
import { loadMcpConfig } from '../mcp/config.js'
import type { Block, Durability, Store } from '../persistence/index.js'
import { openStore } from '../persistence/index.js'
import type { JsonValue } from '../persistence/json.js'
import { createRuntime, type Runtime } from '../sessions/runtime.js'
import type { Session } from '../sessions/session.js'
import { VisError } from '../util/errors.js'
import { visHome } from '../util/home.js'
import { normalizePolicy } from '../worker/policy.js'
import { type EventListener, EventLog } from './event-log.js'
import { finishedEventData, onRuntimeEvent } from './events-bridge.js'
import { type ExecuteDeps, executeBlock } from './execute.js'
import { lockHome } from './home-lock.js'
import { type Live, newLive } from './live.js'
import { type EngineMetrics, engineMetrics } from './metrics.js'
import type { OutcomeLimits } from './outcome.js'
import { unrunError, waitingTicket } from './queue.js'
import { checkRoots, jailRefusal } from './roots.js'
import {
  type AttachmentView,
  type BlockView,
  type CreateSessionBody,
  CreateSessionBodySchema,
  type EventType,
  type ExtensionList,
  IdempotencyKeySchema,
  type InterruptResult,
  type ListSessionsQuery,
  ListSessionsQuerySchema,
  PolicySchema,
  type RunBlockBody,
  RunBlockBodySchema,
  type SessionDetail,
  type SessionDetailQuery,
  SessionDetailQuerySchema,
  type SessionView,
} from './schemas.js'
import { attachmentView, blockView, extensionList, sessionView } from './views.js'
import { reopenWorker, startWorker, type WorkerDeps } from './worker-start.js'

export type EngineOptions = {
  home?: string
  // postgres://... stores sessions in PostgreSQL (default: VIS_DATABASE_URL; none: SQLite in home).
  databaseUrl?: string
  python?: string
  pool?: { size: number }
  // Where the HTTP API listens, when one does; reported by health().
  bindAddress?: string
  interruptAckMs?: number
  // Stored stdout per block is cut past this many characters.
  maxOutputChars?: number
  durability?: Durability
  eventFlushMs?: number
  // Events kept per session for SSE replay (the store's default when unset).
  eventRetention?: number
  // Bind the default host tools (files, git, shell per policy) into sessions with roots.
  tools?: boolean
  // The project: its .vis/extensions load beside the home's, and its declared layout seeds
  // the sandbox's sys.path. `vis serve` passes its working directory; the library, none.
  project?: string
  // Load trusted Python extensions (default true; none exist unless their directories have files).
  extensions?: boolean
  // The configured `python.source_paths`, relative to the project: first on sys.path.
  sourcePaths?: string[]
  // MCP servers whose tools every session gets (default: "servers" of the home's mcp.json).
  mcpServers?: McpServersInput
}

export type SubmittedBlock = {
  // The block as stored when accepted: running, or, for a replayed idempotency key, whatever
  // state the first submission's block is in.
  block: BlockView
  replayed: boolean
  // Settles with the finished block, once it is on disk.
  done: Promise<BlockView>
  // Settles once the acceptance is on disk: await it before answering "accepted" (202).
  // A function, so a caller who waits for `done` anyway pays no fsync for it.
  accepted: () => Promise<void>
}

const DEFAULT_MAX_OUTPUT_CHARS = 1024 * 1024

// The one engine behind the library and the HTTP API: sessions with their workers (the
// runtime) and their durable history (the store). Every rule lives here; the HTTP layer
// only validates, calls and serialises.
export class Engine {
  readonly home: string
  readonly bindAddress: string | undefined
  readonly metrics: EngineMetrics
  readonly abandonedAtStart: number
  // Sessions' drafts (src/drafts): an isolated, reviewable copy of the primary root.
  readonly drafts: Drafts
  private readonly lives = new Map<string, Live>()
  private readonly pending = new Map<string, Promise<BlockView>>()
  private readonly log: EventLog
  private readonly limits: OutcomeLimits
  private readonly startedAt = Date.now()
  private closing: Promise<void> | undefined
  private readonly mcpServers: McpServersInput
  // What the modules this engine is split into need from it (src/engine/execute.ts,
  // worker-start.ts, events-bridge.ts).
  private readonly executeDeps: ExecuteDeps
  private readonly workerDeps: WorkerDeps

  constructor(
    readonly store: Store,
    readonly runtime: Runtime,
    readonly options: EngineOptions,
    private readonly unlock: () => void = () => {},
    // The trusted Python extensions; one registry per engine.
    readonly extensions?: ExtensionRegistry,
  ) {
    this.home = store.home
    this.bindAddress = options.bindAddress
    this.limits = { maxOutputChars: options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS }
    this.mcpServers = options.mcpServers ?? loadMcpConfig(this.home).servers
    this.log = new EventLog(store, { flushMs: options.eventFlushMs })
    this.drafts = new Drafts(store.db, store.home, {
      primaryRoot: (id) =>
        (PolicySchema.parse(this.requireSession(id).policy).roots ?? []).map((r) => resolve(r))[0],
      exclusive: (id, fn) => this.exclusive(id, fn),
      replaceWorker: (id) => this.replaceWorker(id),
      record: (id, type, data) => this.log.append(id, type, JSON.parse(JSON.stringify(data))),
    })
    extensions?.followDrafts((id) => this.drafts.namespacesFor(id))
    this.metrics = engineMetrics({
      sessionsOpen: () => (this.store.db.open ? this.store.sessions.count('open') : 0),
      sessionsLive: () => [...this.lives.values()].filter((l) => l.session?.state === 'ready').length,
      blocksRunning: () => this.pending.size,
      poolSize: () => options.pool?.size ?? 1,
      workerProcesses: () => this.runtime.workerPids().length,
    })
    const bridge = { log: this.log, metrics: this.metrics, drafts: this.drafts, limits: this.limits }
    this.executeDeps = {
      ...bridge,
      store,
      extensions,
      ensureWorker: (live) => this.ensureWorker(live),
    }
    this.workerDeps = {
      runtime,
      store,
      log: this.log,
      metrics: this.metrics,
      drafts: this.drafts,
      extensions,
      options,
      mcpServers: this.mcpServers,
      requireSession: (id) => this.requireSession(id),
      onEvent: (live, ev) => onRuntimeEvent(bridge, live, ev),
    }
    // On PostgreSQL other nodes' blocks are running right now: a node closes only what it takes
    // over from a dead one (leases, store.blocks.abandonRunningIn), never everything at start.
    this.abandonedAtStart = store.dialect === 'postgres' ? 0 : this.abandonLeftovers()
  }

  // Blocks still "running" in the store belong to a host process that died: no worker will
  // ever finish them, so they are closed with an error and their watchers told.
  private abandonLeftovers(): number {
    const rows = this.store.db
      .prepare("SELECT id, session_id FROM blocks WHERE status = 'running'")
      .all() as {
      id: string
      session_id: string
    }[]
    if (rows.length === 0) return 0
    this.store.transaction(() => this.store.blocks.abandonRunning())
    for (const r of rows) {
      const b = this.store.blocks.require(r.id)
      this.log.append(r.session_id, 'block-finished', finishedEventData(b, []))
    }
    return rows.length
  }

  // ---- sessions ----

  async createSession(body: CreateSessionBody = {}): Promise<SessionView> {
    this.assertOpen()
    const v = CreateSessionBodySchema.parse(body)
    const id = v.id ?? `ses_${randomUUID().replaceAll('-', '')}`
    if (this.store.sessions.get(id)) {
      throw new VisError('session.exists', `A session with id ${id} already exists.`, { sessionId: id })
    }
    const policy = normalizePolicy({ roots: v.roots, network: v.network, shell: v.shell })
    checkRoots(policy.roots, id)
    const live = this.liveFor(id)
    // The worker first: a policy the jail refuses must not leave a session row behind.
    let session: Session
    try {
      session = await startWorker(this.workerDeps, live, policy)
    } catch (err) {
      this.forget(live)
      throw jailRefusal(err, policy.roots, id)
    }
    try {
      this.store.sessions.create({ id, title: v.title ?? null, policy })
    } catch (err) {
      this.forget(live)
      await session.dispose()
      await this.extensions?.endSession(id)
      throw err
    }
    this.metrics.sessionsCreated.inc()
    return this.sessionView(id)
  }

  listSessions(query: ListSessionsQuery = {}): SessionView[] {
    const q = ListSessionsQuerySchema.parse(query)
    return this.store.sessions.list(q).map((s) => this.viewOf(s))
  }

  // With format 'display' each block also carries its code formatted for people; the stored
  // code is never changed.
  getSession(id: string, query: SessionDetailQuery = {}): SessionDetail {
    const q = SessionDetailQuerySchema.parse(query)
    const detail = this.store.db.transaction(() => {
      const view = this.sessionView(id)
      const attachments = this.store.attachments.listBySession(id)
      const blocks = this.store.blocks
        .listBySession(id)
        .map((b) => this.withLiveStatus(blockView(b, attachments)))
      return { ...view, blocks }
    })()
    if (q.format === 'display') {
      for (const b of detail.blocks) b.code_display = formatPythonForDisplay(b.code)
    }
    return detail
  }

  sessionView(id: string): SessionView {
    return this.viewOf(this.requireSession(id))
  }

  // Closing keeps the history; the worker goes, a running block ends with an error.
  async closeSession(id: string): Promise<SessionView> {
    const row = this.requireSession(id)
    if (row.closedAt !== null) return this.viewOf(row)
    this.store.sessions.close(id)
    const live = this.lives.get(id)
    if (live) {
      const session = live.session ?? (await live.opening?.catch(() => undefined))
      await session?.dispose()
      await live.tail
      this.forget(live)
    }
    await this.drafts.releaseMount(id)
    await this.extensions?.endSession(id)
    this.log.append(id, 'session-closed', { reason: 'closed by request' })
    this.metrics.sessionsClosed.inc()
    return this.sessionView(id)
  }

  // ---- blocks ----

  async submitBlock(
    sessionId: string,
    body: RunBlockBody,
    // iterationId: the agent turn's iteration the block belongs to (src/agent).
    opts: { idempotencyKey?: string; iterationId?: string } = {},
  ): Promise<SubmittedBlock> {
    this.assertOpen()
    const v = RunBlockBodySchema.parse(body)
    const key =
      opts.idempotencyKey === undefined ? undefined : IdempotencyKeySchema.parse(opts.idempotencyKey)
    const row = this.requireSession(sessionId)
    // A retry of an accepted submission gets that block back, whatever happened since.
    const first = key === undefined ? undefined : this.store.idempotency.lookup(sessionId, key)
    if (first !== undefined) return this.replayed(first, v, key!)
    if (row.closedAt !== null) {
      throw new VisError('session.closed', `Session ${sessionId} is closed; create a new session.`, {
        sessionId,
      })
    }
    const live = this.liveFor(sessionId)
    if (live.session && live.session.state !== 'ready') {
      throw new VisError(
        'worker.retired',
        `Session ${sessionId}'s worker was retired (${live.session.retiredReason ?? live.session.state}); close it and create a new session.`,
        { sessionId },
      )
    }
    // Group commit: accepting a block waits for no fsync; `accepted` and `done` do.
    const started = this.store.lazily(() =>
      this.store.transaction(() => {
        const turnId = v.turn_id ?? null
        if (turnId !== null) this.ensureTurn(sessionId, turnId)
        const iterationId = opts.iterationId
        return this.store.blocks.start({ sessionId, code: v.code, turnId, iterationId, idempotencyKey: key })
      }),
    )
    if (started.replayed) return this.replayed(started.block.id, v, key!)
    const block = started.block
    live.queued++
    // timeout_ms counts from now: the wait behind earlier blocks is part of it.
    const deadline = performance.now() + v.timeout_ms
    const ticket = waitingTicket(v.timeout_ms, () =>
      this.finishUnrun(live, block, 'queue-timeout', v.timeout_ms),
    )
    live.waiting.set(block.id, ticket)
    const run = live.tail.then(() => {
      clearTimeout(ticket.timer)
      live.waiting.delete(block.id)
      if (ticket.cancelled) return ticket.early
      return this.execute(live, block, Math.max(1, Math.round(deadline - performance.now())))
    })
    live.tail = run.catch(() => undefined)
    const done = Promise.race([run, ticket.early]).finally(() => {
      live.queued--
      this.pending.delete(block.id)
    })
    this.pending.set(block.id, done)
    const accepted = () => this.store.synced()
    return { block: { ...blockView(block, []), status: 'queued' }, replayed: false, done, accepted }
  }

  // Cancels a block that has not started. A running block is interrupted instead (interrupt()).
  cancelBlock(sessionId: string, blockId: string): BlockView {
    const view = this.sessionBlock(sessionId, blockId)
    const live = this.lives.get(sessionId)
    if (!live || !this.finishUnrun(live, this.store.blocks.require(blockId), 'cancelled')) {
      throw new VisError(
        'block.not-queued',
        `Block ${blockId} is ${view.status}, not queued: only a block that has not started can be cancelled` +
          (view.status === 'running' ? '; interrupt it instead.' : '.'),
        { sessionId, blockId, status: view.status },
      )
    }
    return this.sessionBlock(sessionId, blockId)
  }

  // A session's block, with its live status (queued or running, while not done).
  sessionBlock(sessionId: string, blockId: string): BlockView {
    this.requireSession(sessionId)
    const b = this.store.blocks.get(blockId)
    if (!b || b.sessionId !== sessionId) {
      throw new VisError('block.not-found', `No block ${blockId} in session ${sessionId}.`, {
        sessionId,
        blockId,
      })
    }
    return this.withLiveStatus(blockView(b, this.store.attachments.listByBlock(blockId)))
  }

  // The store knows running or done; a running block that has not started yet is queued.
  private withLiveStatus(view: BlockView): BlockView {
    if (view.status !== 'running') return view
    return this.lives.get(view.session_id)?.currentBlock === view.id ? view : { ...view, status: 'queued' }
  }

  // Finishes a queued block without running it; false when it is not waiting (any more).
  private finishUnrun(
    live: Live,
    block: Block,
    why: 'cancelled' | 'queue-timeout',
    timeoutMs?: number,
  ): boolean {
    const ticket = live.waiting.get(block.id)
    if (!ticket || ticket.cancelled) return false
    ticket.cancelled = true
    clearTimeout(ticket.timer)
    live.waiting.delete(block.id)
    const stored = this.store.blocks.finish(block.id, {
      error: unrunError(why, timeoutMs),
      durationMs: 0,
      timedOut: why === 'queue-timeout',
    })
    this.log.append(live.id, 'block-finished', finishedEventData(stored, []))
    this.metrics.blocks.inc({ outcome: why === 'cancelled' ? 'error' : 'timeout' })
    ticket.settle(blockView(stored, []))
    return true
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
    const b = this.store.blocks.require(id)
    return blockView(b, this.store.attachments.listByBlock(id))
  }

  // Interrupts the running block. Naming a block makes it safe against races: a named block that
  // is not the running one is left alone (and cancelled if it is still queued).
  async interrupt(sessionId: string, opts: { blockId?: string } = {}): Promise<InterruptResult> {
    this.requireSession(sessionId)
    const live = this.lives.get(sessionId)
    const current = live?.currentBlock ?? null
    if (opts.blockId !== undefined && opts.blockId !== current) {
      const named = this.sessionBlock(sessionId, opts.blockId)
      const cancelled =
        named.status === 'queued' && this.cancelBlock(sessionId, opts.blockId).status === 'done'
      return { landed: false, retired: false, cancelled, block_id: opts.blockId }
    }
    if (!live?.session || current === null) {
      return { landed: false, retired: false, cancelled: false, block_id: current }
    }
    const r = await live.session.interrupt()
    return { landed: r.landed, retired: r.retired, cancelled: false, block_id: current }
  }

  attachment(sessionId: string, attachmentId: string): { attachment: AttachmentView; data: Buffer } {
    this.requireSession(sessionId)
    const meta = this.store.attachments.get(attachmentId)
    const owner = meta ? this.store.blocks.get(meta.blockId)?.sessionId : undefined
    if (!meta || owner !== sessionId) {
      throw new VisError('attachment.not-found', `No attachment ${attachmentId} in session ${sessionId}.`, {
        sessionId,
        attachmentId,
      })
    }
    const { attachment, data } = this.store.attachments.read(attachmentId)
    return { attachment: attachmentView(sessionId, attachment), data }
  }

  // The session's runtime session (its worker started or reopened as needed): what the agent
  // loop reads tool specs from and installs its tool gate on.
  async runtimeSession(sessionId: string): Promise<Session> {
    this.assertOpen()
    if (this.requireSession(sessionId).closedAt !== null) {
      throw new VisError('session.closed', `Session ${sessionId} is closed; create a new session.`, {
        sessionId,
      })
    }
    return this.ensureWorker(this.liveFor(sessionId))
  }

  // The session's worker if one runs in this process now (none is started for it).
  liveSession(sessionId: string): Session | undefined {
    const s = this.lives.get(sessionId)?.session
    return s?.state === 'ready' ? s : undefined
  }

  // The id of the block running in the session now, if any.
  runningBlock(sessionId: string): string | undefined {
    return this.lives.get(sessionId)?.currentBlock
  }

  // Appends an event of another part (the agent's turn events) to the session's log and SSE.
  emit(sessionId: string, type: EventType, data: JsonValue): void {
    this.log.append(sessionId, type, data)
  }

  // Stops the session's worker without closing the session (a cluster node that lost the
  // session's lease, src/cluster): a running block ends with an error, the next block anywhere
  // starts a fresh worker from the defs snapshot.
  async dropWorker(id: string): Promise<void> {
    const live = this.lives.get(id)
    if (!live) return
    const session = live.session ?? (await live.opening?.catch(() => undefined))
    await session?.dispose()
    await live.tail
    this.forget(live)
    await this.extensions?.endSession(id)
  }

  // ---- events ----

  // Live events of one session, in seq order. Replay what came before with replayEvents()
  // in the same tick to miss nothing.
  subscribe(sessionId: string, fn: EventListener): () => void {
    this.requireSession(sessionId)
    return this.log.subscribe(sessionId, fn)
  }

  // Live listeners of a session's events (open SSE streams among them).
  subscriberCount(sessionId: string): number {
    return this.log.listenerCount(sessionId)
  }

  replayEvents(sessionId: string, afterSeq = 0, limit = 1000) {
    this.requireSession(sessionId)
    return this.log.replay(sessionId, afterSeq, limit)
  }

  // ---- service ----

  // Where it lives only for a caller who proved the token: the home path is a local secret.
  health(opts: { revealPaths?: boolean } = {}) {
    const where =
      opts.revealPaths === false ? {} : { home: this.home, bind_address: this.bindAddress ?? null }
    return {
      ok: this.closing === undefined,
      ...where,
      uptime_s: Math.round((Date.now() - this.startedAt) / 1000),
      sessions_open: this.store.db.open ? this.store.sessions.count('open') : 0,
      blocks_running: this.pending.size,
    }
  }

  metricsText(): string {
    return this.metrics.registry.render()
  }

  // ---- extensions ----

  listExtensions(): ExtensionList {
    return extensionList(this.extensions)
  }

  // Loads every extension file again (a file that fails keeps its previous version), then
  // brings live sessions up to date: new tools are bound, tools that went away are unbound.
  // The installs are issued at once and each session's next block waits for them; a block
  // running now is not waited for.
  async reloadExtensions(): Promise<ExtensionList> {
    this.assertOpen()
    const reg = this.extensions
    if (reg) {
      await reg.reload()
      for (const live of this.lives.values()) {
        const s = live.session
        if (s?.state !== 'ready') continue
        const host = new Set(live.hostTools.map((t) => t.name))
        const next = reg
          .tools()
          .map((t) => t.name)
          .filter((n) => !host.has(n))
        const gone = live.extTools.filter((n) => !next.includes(n))
        live.extTools = next
        for (const n of gone) s.unbind(n).catch(() => undefined)
        reg.bindInto(s, live.hostTools).catch(() => undefined)
      }
    }
    return this.listExtensions()
  }

  // The extensions' doctor checks: one warning per file that failed to load.
  extensionChecks(): Check[] {
    const reg = this.extensions
    if (!reg) return [{ id: 'extensions', level: 'info', message: 'extensions are turned off' }]
    return warningChecks(reg.list().length, reg.warnings())
  }

  // Work of other parts over this engine (the agent's turns) to end before the workers stop.
  private readonly closeHooks: Array<() => Promise<void>> = []
  onClose(hook: () => Promise<void>): void {
    this.closeHooks.push(hook)
  }

  // Stops every worker; blocks still running finish with an error; the store is closed last.
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.allSettled(this.closeHooks.map((h) => h()))
      await this.runtime.close()
      await Promise.all([...this.lives.keys()].map((id) => this.drafts.releaseMount(id)))
      await this.extensions?.close()
      await closeRegistrationWorkers()
      await Promise.allSettled([...this.pending.values()])
      this.log.flushAll()
      this.store.close()
      this.unlock()
    })()
    return this.closing
  }

  // ---- internals ----

  // Runs a block and stores its outcome (src/engine/execute.ts).
  private execute(live: Live, block: Block, timeoutMs: number): Promise<BlockView> {
    return executeBlock(this.executeDeps, live, block, timeoutMs)
  }

  private async ensureWorker(live: Live): Promise<Session> {
    if (live.session) {
      if (live.session.state !== 'ready') {
        throw new VisError(
          'worker.retired',
          `Session ${live.id}'s worker was retired (${live.session.retiredReason ?? live.session.state}); close it and create a new session.`,
          { sessionId: live.id },
        )
      }
      return live.session
    }
    if (!live.opening) {
      live.opening = reopenWorker(this.workerDeps, live).finally(() => {
        live.opening = undefined
      })
    }
    return live.opening
  }

  private ensureTurn(sessionId: string, turnId: string): void {
    const turn = this.store.turns.get(turnId)
    if (!turn) {
      this.store.turns.start({ id: turnId, sessionId })
      return
    }
    if (turn.sessionId !== sessionId) {
      throw new VisError('turn.conflict', `Turn ${turnId} belongs to another session.`, { sessionId, turnId })
    }
  }

  // A retry must be the same request (IETF idempotency-key draft): another body under a used key
  // is the client's mistake, answered 422, never a replay of a different block.
  private replayed(
    blockId: string,
    body: { code: string; turn_id?: string | null },
    key: string,
  ): SubmittedBlock {
    const block = this.withLiveStatus(this.getBlock(blockId))
    if (block.code !== body.code || block.turn_id !== (body.turn_id ?? null)) {
      throw new VisError(
        'idempotency.key-reused',
        `Idempotency-Key ${JSON.stringify(key)} was used for a different block in session ${block.session_id}; use a new key for new code.`,
        { sessionId: block.session_id, key, blockId },
      )
    }
    const running = this.pending.get(blockId)
    return {
      block,
      replayed: true,
      done: running ?? Promise.resolve(block),
      accepted: () => this.store.synced(),
    }
  }

  private liveFor(id: string): Live {
    let live = this.lives.get(id)
    if (!live) {
      live = newLive(id)
      this.lives.set(id, live)
    }
    return live
  }

  private forget(live: Live): void {
    live.off?.()
    if (this.lives.get(live.id) === live) this.lives.delete(live.id)
  }

  private viewOf(row: ReturnType<Store['sessions']['require']>): SessionView {
    const live = this.lives.get(row.id)
    const worker = live?.session ? (live.session.state === 'ready' ? 'live' : 'retired') : 'dormant'
    return sessionView(row, worker, (live?.queued ?? 0) > 0, this.drafts.stateNow(row.id))
  }

  // A session's draft: create(label), blank(label), diff(), apply(options?), abandon(why?), state().
  draft(sessionId: string) {
    this.requireSession(sessionId)
    return this.drafts.for(sessionId)
  }

  // Runs fn in the session's block queue: after the blocks before it, before later ones.
  private exclusive<T>(id: string, fn: () => Promise<T>): Promise<T> {
    this.assertOpen()
    const row = this.requireSession(id)
    if (row.closedAt !== null)
      throw new VisError('session.closed', `Session ${id} is closed; create a new session.`, {
        sessionId: id,
      })
    const live = this.liveFor(id)
    const run = live.tail.then(fn)
    live.tail = run.catch(() => undefined)
    return run
  }

  // The worker is jailed for one view of the root (trunk or a draft): a switch ends it, and
  // the next block starts a fresh one that restores the session's definitions (reopen).
  private async replaceWorker(id: string): Promise<void> {
    const live = this.lives.get(id)
    clearDraftView(id)
    // The extension worker too, even alone (a slash command started it): it sees one view.
    await this.extensions?.endSession(id)
    if (!live) return
    const session = live.session ?? (await live.opening?.catch(() => undefined))
    live.off?.()
    live.off = undefined
    live.session = undefined
    if (session) {
      await session.dispose()
      this.log.append(id, 'worker-replaced', { reason: 'the draft state changed' })
    }
  }

  private requireSession(id: string) {
    const row = this.store.sessions.get(id)
    if (!row) throw new VisError('session.not-found', `No session with id ${id}.`, { sessionId: id })
    return row
  }

  private assertOpen(): void {
    if (this.closing !== undefined) throw new VisError('engine.closed', 'The engine is shutting down.')
  }
}

export async function createEngine(options: EngineOptions = {}): Promise<Engine> {
  const unlock = lockHome(visHome(options.home))
  let store: Store
  try {
    store = openStore({
      home: options.home,
      durability: options.durability,
      eventRetention: options.eventRetention,
      databaseUrl: options.databaseUrl,
    })
  } catch (err) {
    unlock()
    throw err
  }
  let runtime: Runtime
  try {
    runtime = await createRuntime({
      home: store.home,
      python: options.python,
      pool: options.pool,
      interruptAckMs: options.interruptAckMs,
      // The engine binds them itself: only sessions with roots get file tools.
      defaultTools: false,
    })
  } catch (err) {
    store.close()
    unlock()
    throw err
  }
  let extensions: ExtensionRegistry | undefined
  try {
    if (options.extensions !== false) {
      extensions = await ExtensionRegistry.open({
        home: store.home,
        project: options.project === undefined ? undefined : resolve(options.project),
        python: options.python,
        store,
      })
    }
    return new Engine(store, runtime, options, unlock, extensions)
  } catch (err) {
    await extensions?.close()
    await closeRegistrationWorkers()
    await runtime.close()
    store.close()
    unlock()
    throw err
  }
}
