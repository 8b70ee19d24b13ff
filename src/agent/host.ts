import type { Engine } from '../engine/engine.js'
import { BLOCK_POSITION_MAX, type EventType } from '../engine/schemas.js'
import { newId } from '../persistence/ids.js'
import type { JsonValue } from '../persistence/json.js'
import { fitBytes, SESSION_PAGE_BYTES } from '../persistence/json-bytes.js'
import { skillsOf } from '../skills/session-skills.js'
import { VisError } from '../util/errors.js'
import { TURN_EVENT_NAMES } from '../util/event-names.js'
import { Approvals } from './approvals.js'
import { type Budget, TurnBudget, unpriced } from './budget.js'
import { allowedTurnModel, childModelRule } from './child-models.js'
import { type AgentConfig, loadAgentConfig, type ModelSpec, resolveModel } from './config.js'
import { ModelDeltaBatcher } from './deltas.js'
import type { EarlyRequest } from './first-request.js'
import { FOLD_TOOL, foldTool } from './fold-tool.js'
import { projectInstructions } from './instructions.js'
import { type CallScope, journalGate } from './journal.js'
import { GuestStateSchema, type LiveState, trackWrites } from './live-state.js'
import { runTurn } from './loop.js'
import { systemPrompt } from './prompt.js'
import type { PromptParts } from './prompt-cache.js'
import { createProvider } from './providers/index.js'
import { type Message, type Provider, zeroUsage } from './providers/types.js'
import { AgentRecords } from './records.js'
import { replayHistory, type TurnRequest } from './replay.js'
import type { ApprovalView, ToolCallView, TurnView, UsageView } from './schemas.js'
import { AgentSession } from './session.js'
import { SubLoopConfigSchema, SubLoops, type TurnParent } from './sub-loop.js'
import { expandTemplate } from './templates.js'
import { modelRef } from './transcript.js'
import { pageTurns } from './turn-page.js'
import { type CostedUsage, costed } from './usage.js'

export type TurnOptions = {
  // <provider>/<model>; default VIS_MODEL or agent.json.
  model?: string
  maxIterations?: number
  signal?: AbortSignal
  // A provider object instead of one built from the model reference (tests, custom hosts).
  provider?: Provider
  // A child turn's parent (sub_loop, src/agent/sub-loop.ts): stored with the turn.
  parent?: TurnParent
  // Added to the system prompt (agent(): the definition's body).
  instructions?: string
  // The turn's token/cost budget; default agent.json `budget`.
  budget?: Budget
  // A child turn's: its parent's budget, which it draws on (sub_loop); `budget` is then ignored.
  parentBudget?: TurnBudget
  // The first request, sent before the session had started (src/agent/first-request.ts): its
  // reply is the first iteration's when the session's system prompt and the task are the ones
  // it was sent with; otherwise it is aborted and the model asked again. Its provider is the turn's.
  early?: EarlyRequest
  // The session's slow prompt parts once it has started, for a cache of them (prompt-cache.ts).
  onPromptParts?: (parts: PromptParts) => void
}

export type AgentEvent = { type: string; sessionId: string; turnId: string | null } & Record<string, unknown>
export type AgentListener = (ev: AgentEvent) => void

export type TurnResult = TurnView & { session_usage: CostedUsage }

export type StartedTurn = { turnId: string; done: Promise<TurnResult> }

type SessionState = {
  history?: Message[]
  tail: Promise<unknown>
  scope: CallScope
  listeners: Set<AgentListener>
  // Turns accepted but not finished: their cancel switches, by turn id.
  running: Map<string, AbortController>
  // Turns waiting behind another: their view until their row exists (prompt, model, when asked).
  queued: Map<string, TurnView>
  // Each accepted turn's end (stored by then), by turn id, until it ends.
  ends: Map<string, Promise<unknown>>
  // Running turns' providers, by turn id: their sub_loop children use the same by default.
  providers: Map<string, Provider>
  // Running turns' budgets, by turn id: their sub_loop children draw on them.
  budgets: Map<string, TurnBudget>
  // What a block's fold_session(note) asked for, taken by the loop once the block has ended.
  fold?: string
  // Paths the session's writing host tools named, for a compaction's live-state note.
  changed: Set<string>
}

const LIVE_STATE_WAIT_MS = 5_000

// What goes to the session's SSE log (each is a commit): the turn's own events. Its blocks are
// there already as the engine's block.started / output / block.finished (with their turn_id);
// the loop's own block.started / block.output / block.ended (iteration-level, other data) are for
// the library's turn listeners only, so the filter is the turn events, not every log name.
const SSE_TYPES = new Set<string>(TURN_EVENT_NAMES)

// The agent loop over one engine: turns of a session run one at a time (others queue), each
// persisted with its iterations, blocks, usage, approvals and journal.
export class Agent {
  readonly records: AgentRecords
  readonly approvals: Approvals
  readonly abandonedAtStart: number
  private readonly sessions = new Map<string, SessionState>()
  private readonly deltas: ModelDeltaBatcher
  private readonly subLoops: SubLoops
  // Providers by their resolved spec: building an SDK client costs about a millisecond, paid on
  // every turn otherwise. A provider keeps no state between requests; a changed key or URL (in
  // agent.json's overrides or the environment) resolves to another spec, so another client.
  private readonly providers = new Map<string, Provider>()

  constructor(
    readonly engine: Engine,
    readonly config: AgentConfig,
  ) {
    this.records = new AgentRecords(engine.store)
    // Whatever an earlier host left running is over, unless another live process on this home
    // runs that session (src/engine/ownership.ts).
    this.abandonedAtStart = this.records.abandonLeftovers((id) => engine.ownedElsewhere(id))
    this.approvals = new Approvals(this.records, config, (a, type) =>
      this.emit(a.session_id, a.turn_id, type, { approval: a as unknown as JsonValue }),
    )
    this.deltas = new ModelDeltaBatcher((sessionId, data) => this.engine.emit(sessionId, 'model.delta', data))
    this.subLoops = new SubLoops({
      engine,
      config: SubLoopConfigSchema.parse(config.subLoops ?? {}),
      defaultMaxIterations: config.maxIterations,
      aliases: config.aliases ?? {},
      models: () => childModelRule(config),
      runChild: (id, prompt, o) => this.turn(id, prompt, o),
      turnOf: (id, turnId) => {
        const s = this.sessions.get(id)
        const provider = s?.providers.get(turnId)
        const controller = s?.running.get(turnId)
        const budget = s?.budgets.get(turnId)
        return provider && controller && budget ? { provider, signal: controller.signal, budget } : undefined
      },
    })
    // A closing engine cancels the turns still running and waits for them to be stored.
    engine.onClose(() => this.cancelAll())
  }

  // The session as an object: `await agent.session(id).turn('...')`.
  session(sessionId: string): AgentSession {
    this.engine.sessionView(sessionId)
    return new AgentSession(this, sessionId)
  }

  subscribe(sessionId: string, fn: AgentListener): () => void {
    const s = this.state(sessionId)
    s.listeners.add(fn)
    return () => s.listeners.delete(fn)
  }

  // The model a client of the HTTP API asked a turn for, held to what the person configured
  // (child-models.ts, the rule sub_loop children follow): refused before any request is made.
  clientModel(asked: string, ctx: { sessionId: string; op: string }): string {
    return allowedTurnModel(childModelRule(this.config), asked, ctx)
  }

  // Runs one turn and waits for it.
  async turn(sessionId: string, prompt: string, opts: TurnOptions = {}): Promise<TurnResult> {
    return (await this.startTurn(sessionId, prompt, opts)).done
  }

  // Accepts a turn: it runs once the session's earlier turns have finished. Bad input (no model,
  // an unknown template, a closed session) is refused here, before anything is queued.
  async startTurn(sessionId: string, prompt: string, opts: TurnOptions = {}): Promise<StartedTurn> {
    const view = this.engine.sessionView(sessionId)
    if (view.state === 'closed') {
      throw new VisError('session.closed', `Session ${sessionId} is closed; create a new session.`, {
        sessionId,
      })
    }
    const policy = view.policy as {
      roots: string[]
      network: { enabled: boolean; allow?: string[]; deny?: string[] }
      shell: boolean
    }
    const provider =
      opts.early?.provider ?? opts.provider ?? this.providerFor(resolveModel(opts.model, this.config))
    const toolCalling = opts.provider ? true : resolveModel(opts.model, this.config).toolCalling
    const expanded = await expandTemplate(prompt, this.config.home, policy.roots[0])
    const maxIterations = opts.maxIterations ?? this.config.maxIterations
    const budget = opts.parentBudget?.child() ?? new TurnBudget(opts.budget ?? this.config.budget ?? {})
    if (budget.costLimited && costed(zeroUsage(), this.config, provider).cost_usd === null)
      throw unpriced(modelRef(provider), { sessionId })
    const s = this.state(sessionId)
    const turnId = newId('turn')
    const controller = new AbortController()
    const outer = opts.signal
    if (outer) {
      if (outer.aborted) controller.abort(outer.reason)
      else outer.addEventListener('abort', () => controller.abort(outer.reason), { once: true })
    }
    s.running.set(turnId, controller)
    s.queued.set(turnId, queuedView(sessionId, turnId, prompt, modelRef(provider)))
    const run = s.tail.then(() =>
      this.execute(sessionId, turnId, {
        prompt,
        expanded: expanded.prompt,
        template: expanded.template?.name,
        provider,
        toolCalling,
        maxIterations,
        policy,
        signal: controller.signal,
        parent: opts.parent,
        instructions: opts.instructions,
        budget,
        early: opts.early,
        onPromptParts: opts.onPromptParts,
      }),
    )
    s.tail = run.catch(() => undefined)
    const done = run.finally(() => {
      s.running.delete(turnId)
      s.queued.delete(turnId)
      s.ends.delete(turnId)
    })
    done.catch(() => undefined)
    s.ends.set(
      turnId,
      done.catch(() => undefined),
    )
    return { turnId, done }
  }

  // Cancels a queued or running turn: the model request is aborted, the block interrupted.
  cancel(sessionId: string, turnId: string): boolean {
    const c = this.sessions.get(sessionId)?.running.get(turnId)
    if (!c) return false
    c.abort(new VisError('turn.cancelled', 'The turn was cancelled.', { sessionId, turnId }))
    return true
  }

  // Cancels, then waits (at most `waitMs`) for the turn to be stored as ended, so what the caller
  // reads next is the cancelled turn rather than the one still running.
  async cancelSettled(sessionId: string, turnId: string, waitMs = 10_000): Promise<boolean> {
    const end = this.sessions.get(sessionId)?.ends.get(turnId)
    if (!this.cancel(sessionId, turnId)) return false
    let timer: NodeJS.Timeout | undefined
    await Promise.race([end, new Promise((r) => (timer = setTimeout(r, waitMs)))])
    clearTimeout(timer)
    return true
  }

  async cancelAll(): Promise<void> {
    const tails: Promise<unknown>[] = []
    for (const [id, s] of this.sessions) {
      for (const turnId of [...s.running.keys()]) this.cancel(id, turnId)
      tails.push(s.tail)
    }
    await Promise.allSettled(tails)
  }

  getTurn(sessionId: string, turnId: string): TurnView {
    const s = this.sessions.get(sessionId)
    const waiting = s?.queued.get(turnId)
    if (waiting && !this.records.turn(turnId)) {
      this.engine.sessionView(sessionId)
      return waiting
    }
    return this.records.requireTurn(sessionId, turnId)
  }

  listTurns(sessionId: string): TurnView[] {
    this.engine.sessionView(sessionId)
    const stored = this.records.turnIds(sessionId).map((id) => this.records.turn(id)!)
    // Then the turns waiting behind them, in the order they were accepted.
    const ids = new Set(stored.map((t) => t.id))
    const waiting = [...(this.sessions.get(sessionId)?.queued.values() ?? [])].filter((t) => !ids.has(t.id))
    return [...stored, ...waiting]
  }

  // One page of the session's turns as GET /v1/sessions/{id}/turns lists them (turn-page.ts):
  // the newest that fit SESSION_PAGE_BYTES (below position `before`, and at most `limit`),
  // oldest first, each clipped; the queued turns behind them on the first page only.
  // `before`: how many earlier turns were left out; `nextBefore`: the position to ask below.
  listTurnsPage(
    sessionId: string,
    q: { before?: number; limit: number },
  ): { turns: TurnView[]; before: number; nextBefore: number | null } {
    this.engine.sessionView(sessionId)
    const records = this.records
    const queued = q.before === undefined ? [...(this.sessions.get(sessionId)?.queued.values() ?? [])] : []
    const limit = q.limit
    const newestFirst = function* (): Generator<TurnView> {
      let n = 0
      const seen = new Set<string>()
      const stored = records.turnsNewestFirst(sessionId, q.before ?? BLOCK_POSITION_MAX)
      const waiting = queued.filter((t) => !records.turn(t.id)).reverse()
      for (const t of waiting) {
        if (n++ >= limit) return
        seen.add(t.id)
        yield t
      }
      for (const t of stored) {
        if (seen.has(t.id)) continue
        if (n++ >= limit) return
        yield t
      }
    }
    const page = pageTurns(newestFirst())
    const oldest = page.turns.find((t) => t.status !== 'queued')
    // A `before` a client can send back (positions are 32-bit, as a block's): with only queued
    // turns listed, every stored turn is still to come.
    const below = oldest ? oldest.position : (q.before ?? BLOCK_POSITION_MAX)
    const before = records.countTurnsBefore(sessionId, below)
    return { turns: page.turns, before, nextBefore: before > 0 ? below : null }
  }

  journal(sessionId: string, turnId: string): ToolCallView[] {
    this.records.requireTurn(sessionId, turnId)
    return this.records.toolCalls(turnId)
  }

  // A page of the turn's journal / the session's approvals as HTTP lists them: from `offset`, in
  // order, no more than fit SESSION_PAGE_BYTES as JSON (fitBytes); `nextOffset` when some were
  // left out (eighteenth outsider pass: a list built whole has no bound but the rows).
  journalPage(
    sessionId: string,
    turnId: string,
    offset: number,
  ): { calls: ToolCallView[]; nextOffset?: number } {
    this.records.requireTurn(sessionId, turnId)
    const page = fitBytes(this.records.toolCallsFrom(turnId, offset), SESSION_PAGE_BYTES)
    return page.full ? { calls: page.items, nextOffset: offset + page.items.length } : { calls: page.items }
  }

  approvalsPage(
    sessionId: string,
    status: ApprovalView['status'] | undefined,
    offset: number,
  ): { approvals: ApprovalView[]; nextOffset?: number } {
    this.engine.sessionView(sessionId)
    const page = fitBytes(this.records.approvalsFrom(sessionId, status, offset), SESSION_PAGE_BYTES)
    return page.full
      ? { approvals: page.items, nextOffset: offset + page.items.length }
      : { approvals: page.items }
  }

  listApprovals(sessionId: string, status?: ApprovalView['status']): ApprovalView[] {
    this.engine.sessionView(sessionId)
    return this.records.approvals(sessionId, status)
  }

  decide(sessionId: string, approvalId: string, decision: 'approve' | 'deny', by = 'library', note?: string) {
    return this.approvals.decide(sessionId, approvalId, decision, by, note)
  }

  // Every turn's tokens summed; the cost is null as soon as one turn's model had no price.
  // Read from the turns' usage column alone: building every turn's view (its iterations, blocks,
  // children) made the end of each turn cost more the longer the session ran. Turns still
  // queued have no usage yet.
  sessionUsage(sessionId: string): CostedUsage {
    this.engine.sessionView(sessionId)
    return this.records.sessionUsage(sessionId)
  }

  // ---- internals ----

  private async execute(
    sessionId: string,
    turnId: string,
    r: {
      prompt: string
      expanded: string
      template: string | undefined
      provider: Provider
      toolCalling: boolean
      maxIterations: number
      policy: {
        roots: string[]
        network: { enabled: boolean; allow?: string[]; deny?: string[] }
        shell: boolean
      }
      signal: AbortSignal
      parent: TurnParent | undefined
      instructions: string | undefined
      budget: TurnBudget
      early: EarlyRequest | undefined
      onPromptParts: ((parts: PromptParts) => void) | undefined
    },
  ): Promise<TurnResult> {
    const s = this.state(sessionId)
    s.queued.delete(turnId)
    const model = `${r.provider.name}/${r.provider.model}`
    // The row and its model in one commit that waits for no fsync (two synchronous ones before):
    // nobody is told the turn is stored until its first block's result or its end, which fsync.
    const store = this.engine.store
    store.lazily(() =>
      store.transaction(
        () => {
          store.turns.start({
            id: turnId,
            sessionId,
            // What replay.ts needs to rebuild the turn's messages after a restart.
            request: {
              prompt: r.prompt,
              ...(r.template ? { template: r.template } : {}),
              ...(r.expanded !== r.prompt ? { expanded: r.expanded } : {}),
              max_iterations: r.maxIterations,
              tool_calling: r.toolCalling,
              ...(r.parent ? { parent: r.parent } : {}),
            } satisfies TurnRequest,
          })
          this.records.setTurnModel(turnId, model)
        },
        { nested: 'atomic' },
      ),
    )
    s.scope.turnId = turnId
    s.providers.set(turnId, r.provider)
    s.budgets.set(turnId, r.budget)
    this.emit(sessionId, turnId, 'turn.started', {
      prompt: r.prompt,
      model,
      ...(r.template ? { template: r.template } : {}),
    })
    let end: Awaited<ReturnType<typeof runTurn>>
    // The running block's output, for the library's listeners (SSE has it as `output` events).
    const offOutput = this.engine.subscribe(sessionId, (ev) => {
      const d = ev.data as { block_id?: string; stream?: string; data?: string }
      if (ev.type === 'output' && d.block_id !== undefined && d.block_id === s.scope.blockId) {
        this.tell(sessionId, turnId, 'block.output', { block_id: d.block_id, stream: d.stream, data: d.data })
      }
    })
    try {
      const session = await this.engine.runtimeSession(sessionId)
      session.setToolGate(
        trackWrites(s.changed, journalGate(sessionId, s.scope, this.records, this.approvals)),
      )
      // Bound into the session on its first turn (and again into a fresh runtime session).
      if (!session.toolNames().includes(FOLD_TOOL)) {
        await session.bindTool(
          foldTool(sessionId, (note) => {
            if (s.scope.turnId === null) return false
            s.fold = note
            return true
          }),
        )
      }
      s.fold = undefined
      await this.subLoops.bindInto(session, sessionId, s.scope)
      const { files, warnings } = await projectInstructions(this.config.home, r.policy.roots)
      for (const w of warnings)
        this.emit(sessionId, turnId, 'turn.warning', { kind: 'instructions', path: w.path, reason: w.reason })
      // Skills and agent definitions that could not be read: said at each turn, as instructions are.
      const found = skillsOf(session)
      for (const p of found?.problems ?? [])
        this.emit(sessionId, turnId, 'turn.warning', { kind: `${p.kind}s`, path: p.path, reason: p.reason })
      const fragments = (this.engine.extensions?.list() ?? [])
        .filter((e) => e.manifest.prompt)
        .map((e) => ({ name: e.manifest.name, text: e.manifest.prompt! }))
      const base = systemPrompt({
        policy: r.policy,
        tools: session.toolSpecs(),
        instructions: files,
        fragments,
        toolCalling: r.toolCalling,
        skills: found?.skills ?? [],
        agents: found?.agents ?? [],
      })
      const system = r.instructions ? `${base}\n\n${r.instructions}` : base
      r.onPromptParts?.({
        policy: { roots: r.policy.roots, network: r.policy.network, shell: r.policy.shell },
        tools: session.toolSpecs(),
        fragments,
        skills: (found?.skills ?? []).map(({ name, description }) => ({ name, description })),
        agents: (found?.agents ?? []).map(({ name, description }) => ({ name, description })),
      })
      s.history ??= replayHistory(this.engine, this.records, sessionId, turnId, {
        images: r.provider.images,
        maxIterations: this.config.maxIterations,
      })
      const early = r.early && usableEarly(r.early, system, r.expanded, r.toolCalling, s.history)
      if (r.early && !early) {
        r.early.abort()
        this.emit(sessionId, turnId, 'turn.warning', {
          kind: 'first-request',
          path: 'first request:',
          reason:
            "the session's prompt differs from the cached one the early request was sent with; the model was asked again",
        })
      }
      end = await runTurn({
        engine: this.engine,
        records: this.records,
        config: this.config,
        provider: r.provider,
        toolCalling: r.toolCalling,
        sessionId,
        turnId,
        system,
        history: s.history,
        prompt: r.expanded,
        maxIterations: r.maxIterations,
        signal: r.signal,
        budget: r.budget,
        early,
        scope: s.scope,
        emit: (type, data) => this.emit(sessionId, turnId, type, data),
        liveState: async (): Promise<LiveState | undefined> => {
          // The note is worth a few seconds at most: a worker that does not answer (busy, gone)
          // leaves the summary without it.
          let timer: NodeJS.Timeout | undefined
          const late = new Promise<undefined>((r) => {
            timer = setTimeout(() => r(undefined), LIVE_STATE_WAIT_MS)
          })
          const raw = await Promise.race([session.callGuest('live_state'), late]).finally(() =>
            clearTimeout(timer),
          )
          const got = GuestStateSchema.safeParse(raw)
          return got.success ? { ...got.data, files_changed: [...s.changed] } : undefined
        },
        takeFold: () => {
          const note = s.fold
          s.fold = undefined
          return note
        },
      })
    } catch (err) {
      r.early?.abort()
      end = {
        status: r.signal.aborted ? 'cancelled' : 'failed',
        answer: null,
        error: { code: (err as VisError).code ?? 'agent.failed', message: (err as Error).message },
        usage: { input: 0, output: 0, reasoning: 0, cached: 0 },
      }
    } finally {
      offOutput()
      s.scope.turnId = null
      s.scope.blockId = null
      s.providers.delete(turnId)
      s.budgets.delete(turnId)
      this.subLoops.forgetTurn(turnId)
    }
    this.deltas.flush(sessionId)
    const usage: UsageView = costed(end.usage, this.config, r.provider)
    this.records.finishTurn(turnId, end.status, { answer: end.answer, error: end.error, usage })
    const type =
      end.status === 'done' ? 'turn.completed' : end.status === 'cancelled' ? 'turn.cancelled' : 'turn.failed'
    this.emit(sessionId, turnId, type, { status: end.status, answer: end.answer, error: end.error, usage })
    return { ...this.records.requireTurn(sessionId, turnId), session_usage: this.sessionUsage(sessionId) }
  }

  private providerFor(spec: ModelSpec): Provider {
    const key = JSON.stringify(spec)
    let p = this.providers.get(key)
    if (!p) {
      // A handful of models at most in practice; a host cycling through keys does not grow this.
      if (this.providers.size >= 16) this.providers.clear()
      p = createProvider(spec)
      this.providers.set(key, p)
    }
    return p
  }

  private emit(sessionId: string, turnId: string | null, type: string, data: Record<string, unknown>): void {
    this.tell(sessionId, turnId, type, data)
    const payload = { turn_id: turnId, ...data } as unknown as JsonValue
    if (type === 'model.delta') {
      this.deltas.add(sessionId, turnId, data.iteration_id as string, data.text as string)
      return
    }
    this.deltas.flush(sessionId)
    if (SSE_TYPES.has(type)) this.engine.emit(sessionId, type as EventType, payload)
    else if (type === 'model.retry')
      this.engine.emit(sessionId, 'turn.warning', {
        kind: 'model.retry',
        ...(payload as object),
      } as JsonValue)
  }

  // The library's listeners only.
  private tell(sessionId: string, turnId: string | null, type: string, data: Record<string, unknown>): void {
    const s = this.sessions.get(sessionId)
    if (s) {
      for (const fn of [...s.listeners]) {
        try {
          fn({ ...data, type, sessionId, turnId })
        } catch {
          // A listener's failure is its own.
        }
      }
    }
  }

  private state(sessionId: string): SessionState {
    let s = this.sessions.get(sessionId)
    if (!s) {
      s = {
        tail: Promise.resolve(),
        scope: { turnId: null, blockId: null },
        listeners: new Set(),
        running: new Map(),
        ends: new Map(),
        queued: new Map(),
        providers: new Map(),
        budgets: new Map(),
        changed: new Set(),
      }
      this.sessions.set(sessionId, s)
    }
    return s
  }
}

// An early request answers the turn's first iteration only if it asked what the turn asks: the
// same system prompt, the task alone (a new conversation), with or without tool calling alike.
function usableEarly(
  early: EarlyRequest,
  system: string,
  task: string,
  toolCalling: boolean,
  history: readonly Message[],
): EarlyRequest | undefined {
  return early.system === system &&
    early.prompt === task &&
    early.toolCalling === toolCalling &&
    history.length === 0
    ? early
    : undefined
}

// A queued turn has no row yet: its position (0) is given when it starts; what was asked, by
// which model and when are known, and stay the same on every read.
function queuedView(sessionId: string, id: string, prompt: string, model: string): TurnView {
  return {
    id,
    session_id: sessionId,
    position: 0,
    status: 'queued',
    prompt,
    model,
    answer: null,
    error: null,
    usage: null,
    created_at: new Date().toISOString(),
    finished_at: null,
    iterations: [],
    parent: null,
    children: [],
    tree_usage: null,
  }
}

const agents = new WeakMap<Engine, Agent>()

// The engine's agent: one per engine, made on first use with the vis home's agent.json.
export function agentFor(engine: Engine, config?: AgentConfig): Agent {
  let a = agents.get(engine)
  if (!a) {
    a = new Agent(engine, config ?? loadAgentConfig({ home: engine.home }))
    agents.set(engine, a)
  }
  return a
}
