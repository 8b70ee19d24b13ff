import { randomUUID } from 'node:crypto'
import { formatPythonForDisplay } from '../format/index.js'
import { fitBytes, jsonValueBytes, SESSION_PAGE_BYTES } from '../persistence/json-bytes.js'
import type { Session } from '../sessions/session.js'
import { normalizePolicy, type WorkerPolicy } from '../sessions/session-policy.js'
import { VisError } from '../util/errors.js'
import { withLiveStatus } from './block-queue.js'
import {
  assertOpen,
  claim,
  type EngineCore,
  forget,
  liveFor,
  requireSession,
  type SessionRow,
} from './engine-core.js'
import { finishedEventData } from './events-bridge.js'
import { childPolicy, jailRefusal } from './roots.js'
import {
  BLOCK_POSITION_MAX,
  type CreateSessionBody,
  CreateSessionBodySchema,
  type ListSessionsQuery,
  ListSessionsQuerySchema,
  SESSION_VIEW_BLOCK_CHARS,
  type SessionDetail,
  type SessionDetailQuery,
  SessionDetailQuerySchema,
  type SessionView,
  type SessionViewQuery,
  SessionViewQuerySchema,
} from './schemas.js'
import { resolvePolicy } from './session-open.js'
import { disposeLive } from './session-worker.js'
import { fromStoredPolicy, toStoredPolicy } from './stored-policy.js'
import { blockView, sessionView as toSessionView } from './views.js'
import { startWorker } from './worker-start.js'

// A session's lifecycle: created (its worker first), listed, read with its blocks, closed
// (the history kept), and the blocks a dead host process left running closed at start.

export async function createSession(
  core: EngineCore,
  body: CreateSessionBody,
  opts: { within?: string[]; pins?: Readonly<Record<string, string>> } = {},
): Promise<SessionView> {
  assertOpen(core)
  const v = CreateSessionBodySchema.parse(body)
  const id = freshId(core, v.id)
  const within = opts.within ?? core.workerDeps.options.allowRoots
  const policy = resolvePolicy(
    {
      roots: v.roots,
      network: v.network,
      shell: v.shell,
      ...(v.mode ? { mode: v.mode } : {}),
      ...(within ? { within } : {}),
    },
    id,
    opts.pins ? { verify: opts.pins } : {},
  )
  assertPolicySize(policy, id)
  return openSession(core, id, v.title ?? null, policy, policy.pins ?? {})
}

// The most a session's policy (roots, network rules, shell, mode) weighs as JSON. Every session
// view and every entry of the session list carries it whole: unbounded, one POST made a list
// entry of any size (eighteenth outsider pass: 36 policies of 1 MiB made the session list 34 MiB).
// At most a quarter of a page (SESSION_PAGE_BYTES), so a page always holds a session.
export const MAX_POLICY_BYTES = 2 ** 20

function assertPolicySize(policy: WorkerPolicy, id: string): void {
  const { within: _w, pins: _p, ...shown } = policy
  const bytes = jsonValueBytes(shown)
  if (bytes > MAX_POLICY_BYTES) {
    throw new VisError(
      'policy.too-large',
      `The session's policy is ${bytes} bytes of JSON; at most ${MAX_POLICY_BYTES} are allowed (fewer network rules, paths or roots).`,
      { sessionId: id },
    )
  }
}

// A sub_loop child of a session this process runs: the parent's network and shell, and roots
// derived from the parent's pinned roots, never from what their paths name now (childPolicy).
export async function createChildSession(
  core: EngineCore,
  parentId: string,
  body: { roots?: string[]; title?: string },
): Promise<SessionView> {
  assertOpen(core)
  const id = freshId(core, undefined)
  const stored = fromStoredPolicy(requireSession(core, parentId).policy)
  const live = core.lives.get(parentId)
  const within = live?.within ?? core.workerDeps.options.allowRoots
  const pins = live?.pins ?? (stored.pins?.here ? stored.pins.pins : undefined)
  const parent = normalizePolicy({
    ...stored.policy,
    ...(within ? { within } : {}),
    ...(pins && stored.policy.roots.length > 0 ? { pins } : {}),
  })
  const policy = childPolicy(parent, body.roots, id)
  // A parent working in a draft lends it to its child (drafts.ts lend).
  core.drafts.lend(id, parentId, policy.roots)
  // The child joins its parent's family (the parent chain's top session): their stored
  // attachments are bounded together, so children do not multiply the bound.
  const familyId = core.store.sessions.familyOf(parentId) ?? parentId
  return openSession(core, id, body.title ?? null, policy, policy.pins ?? {}, familyId)
}

function freshId(core: EngineCore, given: string | undefined): string {
  const id = given ?? `ses_${randomUUID().replaceAll('-', '')}`
  if (core.store.sessions.get(id)) {
    throw new VisError('session.exists', `A session with id ${id} already exists.`, { sessionId: id })
  }
  return id
}

// A checked policy and its roots' pins become a session: its worker, then its row.
async function openSession(
  core: EngineCore,
  id: string,
  title: string | null,
  policy: WorkerPolicy,
  pins: Record<string, string>,
  familyId?: string,
): Promise<SessionView> {
  const live = liveFor(core, id)
  live.within = policy.within
  live.pins = pins
  // No roots, no pins: the policy stays equal to the warm pool's default one.
  if (policy.roots.length > 0) policy.pins = pins
  // The worker first: a policy the jail refuses must not leave a session row behind.
  let session: Session
  try {
    session = await startWorker(core.workerDeps, live, policy)
  } catch (err) {
    forget(core, live)
    await core.drafts.releaseMount(id)
    throw jailRefusal(err, policy.roots, id)
  }
  try {
    // The bounds are the server's, not the session's: they are not stored (nor shown). The
    // pins are stored beside the policy (stored-policy.ts): a session reopened by a later host
    // process still refuses a root swapped since its creation.
    const { within: _w, pins: _p, ...stored } = policy
    core.store.sessions.create({
      id,
      title,
      policy: toStoredPolicy(stored, pins),
      ...(familyId !== undefined ? { familyId } : {}),
    })
    claim(core, id)
  } catch (err) {
    forget(core, live)
    await session.dispose()
    await core.drafts.releaseMount(id)
    await core.extensions?.endSession(id)
    throw err
  }
  core.metrics.sessionsCreated.inc()
  return sessionView(core, id)
}

export function listSessions(core: EngineCore, query: ListSessionsQuery): SessionView[] {
  const q = ListSessionsQuerySchema.parse(query)
  return core.store.sessions.list(q).map((s) => viewOf(core, s))
}

// What GET /v1/sessions answers: the sessions of `limit` (newest first, from `offset`) that fit
// SESSION_PAGE_BYTES as JSON (each carries its policy, MAX_POLICY_BYTES at most), read a few at a
// time so neither the read nor the answer grows past it; `next_offset` when the bound left some
// out (eighteenth outsider pass: the list was bounded by count only).
export function listSessionsPage(
  core: EngineCore,
  query: ListSessionsQuery,
): { sessions: SessionView[]; next_offset?: number } {
  const q = ListSessionsQuerySchema.parse(query)
  const views = function* (): Generator<SessionView> {
    let offset = q.offset
    let left = q.limit
    while (left > 0) {
      const rows = core.store.sessions.list({ state: q.state, limit: Math.min(8, left), offset })
      for (const s of rows) yield viewOf(core, s)
      if (rows.length < Math.min(8, left)) return
      offset += rows.length
      left -= rows.length
    }
  }
  const page = fitBytes(views(), SESSION_PAGE_BYTES)
  return page.full
    ? { sessions: page.items, next_offset: q.offset + page.items.length }
    : { sessions: page.items }
}

// With format 'display' each block also carries its code formatted for people; the stored
// code is never changed.
export function getSession(core: EngineCore, id: string, query: SessionDetailQuery): SessionDetail {
  const q = SessionDetailQuerySchema.parse(query)
  core.log.flush(id) // blocks whose rows are still deferred (block-queue.ts) are listed too
  const detail = core.store.db.transaction(() => {
    const view = sessionView(core, id)
    const attachments = core.store.attachments.listBySession(id)
    const blocks = core.store.blocks
      .listBySession(id)
      .map((b) => withLiveStatus(core, blockView(b, attachments)))
    return { ...view, blocks }
  })()
  if (q.format === 'display') {
    for (const b of detail.blocks) b.code_display = formatPythonForDisplay(b.code)
  }
  return detail
}

// What GET /v1/sessions/{id} answers: the session with its last blocks, each cut in the database
// (listSummaries), so neither the read nor the answer grows with what the blocks printed.
// Bounded in bytes as sent too (SESSION_PAGE_BYTES, listSummaries, which counts the listed blocks'
// attachments read below): `spareBytes` is what the
// answer may still take, for the codes' display (`?format=display`: each code counts twice,
// formatted code longer than its code takes from the spare).
export function sessionSummary(core: EngineCore, id: string, query: SessionViewQuery): SessionDetail {
  return sessionPage(core, id, query).detail
}

export function sessionPage(
  core: EngineCore,
  id: string,
  query: SessionViewQuery,
): { detail: SessionDetail; spareBytes: number } {
  const q = SessionViewQuerySchema.parse(query)
  core.log.flush(id)
  return core.store.db.transaction(() => {
    const view = sessionView(core, id)
    const page = core.store.blocks.listSummaries(id, {
      // No `before`: every block (a bound PostgreSQL's integer column takes; MAX_SAFE_INTEGER failed the
      // cluster's GET of every session, db.query-failed).
      beforePosition: q.before ?? BLOCK_POSITION_MAX,
      limit: q.limit,
      maxChars: SESSION_VIEW_BLOCK_CHARS,
      maxBytes: SESSION_PAGE_BYTES,
      display: q.format === 'display',
    })
    const positions = page.blocks.map((b) => b.position)
    const attachments =
      positions.length === 0
        ? []
        : core.store.attachments.listByBlockPositions(id, Math.min(...positions), Math.max(...positions))
    const blocks = page.blocks.map((b) => {
      const v = withLiveStatus(core, blockView(b, attachments))
      return page.cut.has(b.id) ? { ...v, truncated: true as const } : v
    })
    return {
      detail: { ...view, blocks, blocks_before: page.before },
      spareBytes: Math.max(0, SESSION_PAGE_BYTES - page.bytes),
    }
  })()
}

// What a listing of a session's resources shows (MCP resources/list): the session, how many blocks
// it has, and its attachments' metadata, all from SQL: no block's output or value is read, so a
// listing costs the same whatever the blocks printed (getSession read every block whole).
// `page`: which of its attachments (offset and count, in block then attachment order).
export function sessionResources(
  core: EngineCore,
  id: string,
  page?: { offset: number; limit: number },
): {
  view: SessionView
  blockCount: number
  attachments: Array<{
    id: string
    name: string | null
    mediaType: string
    size: number
    blockPosition: number
  }>
} {
  core.log.flush(id) // blocks whose rows are still deferred (block-queue.ts) are counted too
  return core.store.db.transaction(() => ({
    view: sessionView(core, id),
    blockCount: core.store.blocks.countBySession(id),
    attachments: core.store.attachments.listBySessionWithBlockPosition(id, page),
  }))()
}

export function sessionView(core: EngineCore, id: string): SessionView {
  return viewOf(core, requireSession(core, id))
}

// Closing keeps the history; the worker goes, a running block ends with an error.
export async function closeSession(core: EngineCore, id: string): Promise<SessionView> {
  const row = requireSession(core, id)
  if (row.closedAt !== null) return viewOf(core, row)
  // Run by another process on this home: it closes it (its worker, its draft mount).
  const owner = core.ownership?.ownerElsewhere(id)
  if (owner) {
    await core.ownership!.forward(owner, { op: 'close', sessionId: id })
    return sessionView(core, id)
  }
  core.store.sessions.close(id)
  const live = core.lives.get(id)
  if (live) await disposeLive(core, live)
  await core.drafts.releaseMount(id)
  await core.extensions?.endSession(id)
  core.log.append(id, 'session.closed', { reason: 'closed by request' })
  core.log.flush(id)
  core.ownership?.release(id)
  core.metrics.sessionsClosed.inc()
  return sessionView(core, id)
}

// Blocks still "running" in the store whose session has no live owner (ownership.ts) belong to
// a host process that died: no worker will ever finish them, so they are closed with an error
// and their watchers told. Another live process's running blocks are its own.
export function abandonLeftovers(core: EngineCore): number {
  const rows = core.store.db.prepare("SELECT id, session_id FROM blocks WHERE status = 'running'").all() as {
    id: string
    session_id: string
  }[]
  const orphaned = [...new Set(rows.map((r) => r.session_id))].filter((s) => !ownedElsewhere(core, s))
  if (orphaned.length === 0) return 0
  const closed = core.store.blocks.abandonRunningIn(
    orphaned,
    'The host stopped while this block was running.',
  )
  for (const b of closed) core.log.append(b.sessionId, 'block.finished', finishedEventData(b, []))
  return closed.length
}

// Whether another live process on this home runs the session now.
export function ownedElsewhere(core: EngineCore, sessionId: string): boolean {
  return core.ownership?.ownerElsewhere(sessionId) !== undefined
}

function viewOf(core: EngineCore, row: SessionRow): SessionView {
  const live = core.lives.get(row.id)
  const worker = live?.session ? (live.session.state === 'ready' ? 'live' : 'retired') : 'dormant'
  return toSessionView(row, worker, (live?.queued ?? 0) > 0, core.drafts.stateNow(row.id))
}
