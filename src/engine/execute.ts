import type { Drafts } from '../drafts/drafts.js'
import type { ExtensionRegistry } from '../extensions/index.js'
import type { Block, FinishBlockInput, Store } from '../persistence/index.js'
import type { Session } from '../sessions/session.js'
import { VisError } from '../util/errors.js'
import { boundAttachments } from './attachment-budget.js'
import { finishFromFailure, finishFromOutcome, type OutcomeLimits, outcomeLabel } from './block-finish.js'
import type { EventLog } from './event-log.js'
import { finishedEventData } from './events-bridge.js'
import type { Live } from './live.js'
import type { EngineMetrics } from './metrics.js'
import { withOutboxBytes } from './outbox-files.js'
import { persistFinish } from './persist-outcome.js'
import type { BlockView } from './schemas.js'
import { blockView } from './views.js'

// What running one block needs from the engine that owns the session.
export type ExecuteDeps = {
  store: Store
  log: EventLog
  metrics: EngineMetrics
  drafts: Drafts
  limits: OutcomeLimits
  // The bound on the stored attachments of one session with its sub_loop family, in MiB
  // (attachment-budget.ts).
  attachmentsMb: number
  extensions: ExtensionRegistry | undefined
  ensureWorker: (live: Live) => Promise<Session>
}

// Runs a block in the session's worker and stores its outcome; a failure (no worker, a worker
// that died) is an outcome too, with what the block printed before it.
export async function executeBlock(
  deps: ExecuteDeps,
  live: Live,
  block: Block,
  timeoutMs: number,
): Promise<BlockView> {
  const { store, log, metrics } = deps
  const t0 = performance.now()
  let finish: FinishBlockInput
  let snapshot: unknown
  let session: Session | undefined
  try {
    session = await deps.ensureWorker(live)
    live.starting = block
    live.printed = ''
    const context = await blockContext(deps.extensions, live)
    // Nothing can type into an engine block (no route writes stdin): input() ends at once.
    const outcome = await session.runBlock(block.code, {
      timeoutMs,
      stdin: '',
      ...(context ? { context } : {}),
    })
    finish = boundAttachments(
      finishFromOutcome(await withOutboxBytes(outcome, session.outbox), performance.now() - t0, deps.limits),
      { storedBytes: () => store.attachments.familyBytes(live.id), limitMb: deps.attachmentsMb },
    )
    snapshot = session.lastSnapshot
  } catch (err) {
    const ran = live.currentBlock === block.id
    const partial = ran ? live.printed : ''
    finish = finishFromFailure(
      closedUnder(store, live.id, ran, err),
      partial,
      performance.now() - t0,
      deps.limits,
    )
  } finally {
    live.currentBlock = undefined
    live.starting = undefined
    live.printed = ''
  }
  // The outcome and its block.finished event commit together: one write, and no reader sees
  // a finished block without its event or the other way round. Atomic (no savepoints in it):
  // persistFinish, which recovers from a refused outcome, checks it before writing or opens
  // its own savepoint; the event log rethrows inside an atomic transaction; listeners run
  // with savepoints again (src/persistence/statements.ts).
  const { stored, attachments } = store.lazily(() =>
    store.transaction(
      () => {
        // A row still deferred (a short sync block) is inserted finished, before the rows of
        // blocks queued behind it (positions) and with the batch's events: one commit.
        const unstored = log.takeStart(live.id, block.id) !== undefined
        const stored = persistFinish(store, block, finish, snapshot, unstored)
        // Its block.started, still in the batch, reads the position the insert just allocated.
        block.position = stored.position
        // Attachments are read back (ids, sizes) only when the block made some.
        const attachments = finish.attachments?.length ? store.attachments.listByBlock(block.id) : []
        // With the batch (block.started, output, rows of blocks queued behind): one append.
        log.append(live.id, 'block.finished', finishedEventData(stored, attachments))
        return { stored, attachments }
      },
      { nested: 'atomic' },
    ),
  )
  metrics.blocks.inc({ outcome: outcomeLabel(finish) })
  metrics.blockLatency.observe((stored.durationMs ?? 0) / 1000)
  await deps.drafts.refresh(live.id).catch(() => undefined)
  // The outcome is acknowledged only once it is on disk; blocks finishing together share the fsync.
  await store.synced()
  return blockView(stored, attachments)
}

// The extensions' ctx slices, as the block's `session` dict. A failing ctx function fails
// the block with its reason: the model must not run on a silently missing context.
async function blockContext(
  extensions: ExtensionRegistry | undefined,
  live: Live,
): Promise<Record<string, unknown> | undefined> {
  if (!extensions) return undefined
  const context = await extensions.sessionContext(live.id)
  if (Object.keys(context).length === 0 && !live.hadContext) return undefined
  live.hadContext = true
  return context
}

// A block the session's close stopped (running) or never started (queued) says so, instead of
// the disposed worker's own words ("worker 123 was closed", "...was retired; close it and create
// a new session", advice that makes no sense to the client that just closed it).
function closedUnder(store: Store, sessionId: string, ran: boolean, err: unknown): unknown {
  let closedAt: number | null | undefined
  try {
    closedAt = store.sessions.closedAt(sessionId)
  } catch {
    return err
  }
  if (typeof closedAt !== 'number') return err
  return new VisError(
    'session.closed',
    ran
      ? 'The session was closed while this block ran; it was stopped.'
      : 'The session was closed before this block started; it never ran.',
    { sessionId },
  )
}
