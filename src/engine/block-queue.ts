import { newId } from '../persistence/ids.js'
import type { Block } from '../persistence/index.js'
import { VisError } from '../util/errors.js'
import {
  assertOpen,
  claim,
  type EngineCore,
  liveFor,
  refuseClosed,
  requireSession,
  requireSessionState,
} from './engine-core.js'
import { finishedEventData } from './events-bridge.js'
import { executeBlock } from './execute.js'
import type { Live } from './live.js'
import { unrunError, waitingTicket } from './queue.js'
import { commonRunBlockBody } from './run-block-body.js'
import { type BlockView, IdempotencyKeySchema, type RunBlockBody, RunBlockBodySchema } from './schemas.js'
import { retiredError } from './session-worker.js'
import { blockView } from './views.js'

// A session's block queue: blocks run one at a time in submission order; a block waiting its
// turn can be cancelled or time out; a retried submission (same Idempotency-Key) is replayed.

export type SubmittedBlock = {
  // The block's id, without building its view (what a sync caller needs before `done`).
  id: string
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

export function submitBlock(
  core: EngineCore,
  sessionId: string,
  body: RunBlockBody,
  // iterationId: the agent turn's iteration the block belongs to (src/agent).
  opts: { idempotencyKey?: string; iterationId?: string },
): SubmittedBlock {
  const { store } = core
  assertOpen(core)
  const v = commonRunBlockBody(body) ?? RunBlockBodySchema.parse(body)
  const key = opts.idempotencyKey === undefined ? undefined : IdempotencyKeySchema.parse(opts.idempotencyKey)
  const row = requireSessionState(core, sessionId)
  // A retry of an accepted submission gets that block back, whatever happened since.
  const first = key === undefined ? undefined : store.idempotency.lookup(sessionId, key)
  if (first !== undefined) return replayed(core, first, v, key!)
  refuseClosed(row)
  claim(core, sessionId)
  const live = liveFor(core, sessionId)
  if (live.session && live.session.state !== 'ready') throw retiredError(live, live.session)
  // A plain block (no key, no turn) defers its row: nobody has been told about it yet, so it
  // is stored with its finish (one commit per short block) or by the event log's flush timer
  // while it runs (EventLog.deferStart). A key or a turn needs the row now (the replay lookup,
  // the turn's parents), and `accepted()` stores a deferred row before a 202 promises it.
  const defer = key === undefined && v.turn_id == null && opts.iterationId === undefined
  let started: { block: Block; replayed: boolean }
  let acceptedRow: Block | undefined
  if (defer) {
    started = { block: unstoredBlock(sessionId, v.code, store.now()), replayed: false }
    core.log.deferStart(sessionId, started.block, (row) => {
      acceptedRow = row
    })
  } else {
    // Rows deferred before this one are stored first: positions follow submission order.
    core.log.flush(sessionId)
    // Group commit: accepting a block waits for no fsync; `accepted` and `done` do.
    started = store.lazily(() =>
      store.transaction(() => {
        const turnId = v.turn_id ?? null
        if (turnId !== null) ensureTurn(core, sessionId, turnId)
        const iterationId = opts.iterationId
        return store.blocks.start({ sessionId, code: v.code, turnId, iterationId, idempotencyKey: key })
      }),
    )
    acceptedRow = started.block
  }
  if (started.replayed) return replayed(core, started.block.id, v, key!)
  const block = started.block
  live.queued++
  // timeout_ms counts from now: the wait behind earlier blocks is part of it.
  const deadline = performance.now() + v.timeout_ms
  const ticket = waitingTicket(v.timeout_ms, () =>
    finishUnrun(core, live, block, 'queue-timeout', v.timeout_ms),
  )
  live.waiting.set(block.id, ticket)
  const run = live.tail.then(() => {
    clearTimeout(ticket.timer)
    live.waiting.delete(block.id)
    if (ticket.cancelled) return ticket.early
    // Runs the block and stores its outcome (src/engine/execute.ts).
    return executeBlock(core.executeDeps, live, block, Math.max(1, Math.round(deadline - performance.now())))
  })
  live.tail = run.catch(() => undefined)
  const done = Promise.race([run, ticket.early]).finally(() => {
    live.queued--
    core.pending.delete(block.id)
  })
  core.pending.set(block.id, done)
  const accepted = () => {
    if (acceptedRow === undefined) core.log.flush(sessionId)
    return store.synced()
  }
  return {
    id: block.id,
    // As accepted: queued. Before its row is stored only its position is unknown (allocated at
    // the insert, another process may add blocks too): reading it stores the row.
    get block(): BlockView {
      if (acceptedRow !== undefined) return { ...blockView(acceptedRow, []), status: 'queued' }
      const view: BlockView = { ...blockView(block, []), status: 'queued' }
      return Object.defineProperty(view, 'position', {
        enumerable: true,
        get: () => {
          core.log.flush(sessionId)
          return acceptedRow?.position ?? core.store.blocks.require(block.id).position
        },
      })
    },
    replayed: false,
    done,
    accepted,
  }
}

// The in-memory row of a block whose INSERT is deferred; position is allocated when it is stored.
function unstoredBlock(sessionId: string, code: string, createdAt: number): Block {
  return {
    id: newId('blk'),
    sessionId,
    turnId: null,
    iterationId: null,
    position: 0,
    code,
    stdout: '',
    stderr: '',
    result: null,
    value: null,
    error: null,
    durationMs: null,
    timedOut: false,
    status: 'running',
    createdAt,
    finishedAt: null,
    survived: null,
  }
}

// Cancels a block that has not started. A running block is interrupted instead (interrupt()).
export function cancelBlock(core: EngineCore, sessionId: string, blockId: string): BlockView {
  const view = sessionBlock(core, sessionId, blockId)
  const live = core.lives.get(sessionId)
  if (!live || !finishUnrun(core, live, core.store.blocks.require(blockId), 'cancelled')) {
    throw new VisError(
      'block.not-queued',
      `Block ${blockId} is ${view.status}, not queued: only a block that has not started can be cancelled` +
        (view.status === 'running' ? '; interrupt it instead.' : '.'),
      { sessionId, blockId, status: view.status },
    )
  }
  return sessionBlock(core, sessionId, blockId)
}

// A session's block, with its live status (queued or running, while not done).
export function sessionBlock(core: EngineCore, sessionId: string, blockId: string): BlockView {
  requireSession(core, sessionId)
  const b = storedBlock(core, blockId, sessionId)
  if (!b || b.sessionId !== sessionId) {
    throw new VisError('block.not-found', `No block ${blockId} in session ${sessionId}.`, {
      sessionId,
      blockId,
    })
  }
  return withLiveStatus(core, blockView(b, core.store.attachments.listByBlock(blockId)))
}

export function getBlock(core: EngineCore, id: string): BlockView {
  const b = storedBlock(core, id) ?? core.store.blocks.require(id)
  return blockView(b, core.store.attachments.listByBlock(id))
}

// A block whose row is still deferred (EventLog.deferStart) is stored on its first read: a
// reader sees what a restart would, and costs nothing when the row is there.
function storedBlock(core: EngineCore, id: string, sessionId?: string): Block | undefined {
  const b = core.store.blocks.get(id)
  if (b !== undefined) return b
  if (sessionId === undefined) core.log.flushAll()
  else core.log.flush(sessionId)
  return core.store.blocks.get(id)
}

// The store knows running or done; a running block that has not started yet is queued.
export function withLiveStatus(core: EngineCore, view: BlockView): BlockView {
  if (view.status !== 'running') return view
  return core.lives.get(view.session_id)?.currentBlock === view.id ? view : { ...view, status: 'queued' }
}

// Runs fn in the session's block queue: after the blocks before it, before later ones.
export function exclusive<T>(core: EngineCore, id: string, fn: () => Promise<T>): Promise<T> {
  assertOpen(core)
  refuseClosed(requireSession(core, id))
  const live = liveFor(core, id)
  const run = live.tail.then(fn)
  live.tail = run.catch(() => undefined)
  return run
}

// Finishes a queued block without running it; false when it is not waiting (any more).
function finishUnrun(
  core: EngineCore,
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
  // Its row may still be deferred (the queue-timeout timer does not go through sessionBlock).
  core.log.flush(live.id)
  const stored = core.store.blocks.finish(block.id, {
    error: unrunError(why, timeoutMs),
    durationMs: 0,
    timedOut: why === 'queue-timeout',
  })
  core.log.append(live.id, 'block.finished', finishedEventData(stored, []))
  core.metrics.blocks.inc({ outcome: why === 'cancelled' ? 'error' : 'timeout' })
  ticket.settle(blockView(stored, []))
  return true
}

function ensureTurn(core: EngineCore, sessionId: string, turnId: string): void {
  const owner = core.store.turns.sessionOf(turnId)
  if (owner === undefined) {
    core.store.turns.start({ id: turnId, sessionId })
    return
  }
  if (owner !== sessionId) {
    throw new VisError('turn.conflict', `Turn ${turnId} belongs to another session.`, { sessionId, turnId })
  }
}

// A retry must be the same request (IETF idempotency-key draft): another body under a used key
// is the client's mistake, answered 422, never a replay of a different block.
function replayed(
  core: EngineCore,
  blockId: string,
  body: { code: string; turn_id?: string | null },
  key: string,
): SubmittedBlock {
  const block = withLiveStatus(core, getBlock(core, blockId))
  if (block.code !== body.code || block.turn_id !== (body.turn_id ?? null)) {
    throw new VisError(
      'idempotency.key-reused',
      `Idempotency-Key ${JSON.stringify(key)} was used for a different block in session ${block.session_id}; use a new key for new code.`,
      { sessionId: block.session_id, key, blockId },
    )
  }
  const running = core.pending.get(blockId)
  return {
    id: blockId,
    block,
    replayed: true,
    done: running ?? Promise.resolve(block),
    accepted: () => core.store.synced(),
  }
}
