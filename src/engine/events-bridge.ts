import type { Drafts } from '../drafts/drafts.js'
import type { Attachment, Block } from '../persistence/index.js'
import type { SessionEvent as RuntimeEvent } from '../sessions/events.js'
import type { OutcomeLimits } from './block-finish.js'
import type { EventLog } from './event-log.js'
import type { Live } from './live.js'
import type { EngineMetrics } from './metrics.js'

// What a worker's runtime events become: the session's event log (what SSE and the
// transcript read), the metrics, and the live state of the block it is running.
export type BridgeDeps = {
  log: EventLog
  metrics: EngineMetrics
  drafts: Drafts
  limits: OutcomeLimits
}

const STARTED_IDS_KEPT = 4

export function onRuntimeEvent(deps: BridgeDeps, live: Live, ev: RuntimeEvent): void {
  const { log, metrics } = deps
  switch (ev.type) {
    case 'output':
      if (!live.currentBlock) return
      if (ev.stream === 'stdout' && live.printed.length < deps.limits.maxOutputChars) live.printed += ev.data
      log.output(live.id, live.currentBlock, ev.stream, ev.data)
      return
    case 'interrupt':
      log.append(live.id, 'interrupt', {
        block_id: live.startedIds.get(ev.block) ?? null,
        landed: ev.landed,
        retired: ev.retired,
      })
      return
    case 'worker.replaced':
      metrics.workerRestarts.inc()
      log.append(live.id, 'worker.replaced', { old_pid: ev.oldPid, pid: ev.pid, reason: ev.reason })
      return
    case 'worker.retired':
      metrics.workerRetirements.inc()
      log.append(live.id, 'worker.retired', { pid: ev.pid, reason: ev.reason })
      return
    case 'block.started': {
      const block = live.starting
      if (!block) return
      live.starting = undefined
      live.currentBlock = block.id
      live.startedIds.set(ev.block, block.id)
      // Only the latest few matter: an acknowledgement is bounded (interruptAckMs) and a
      // session runs one block at a time.
      if (live.startedIds.size > STARTED_IDS_KEPT)
        live.startedIds.delete(live.startedIds.keys().next().value as number)
      // The draft the block runs in (null: the trunk), for the transcript of events.
      const draft = deps.drafts.stateNow(live.id).draft?.label ?? null
      // Deferred: committed with the block's finish or its first output batch (EventLog.deferred).
      // Its data is made when written: a block whose row is deferred too has no position until
      // that row is stored, in the same commit or just before (EventLog.insert, execute.ts).
      log.deferred(live.id, 'block.started', () => ({
        block_id: block.id,
        position: block.position,
        turn_id: block.turnId,
        code: block.code,
        draft,
      }))
      return
    }
    default:
      // block.finished is emitted by the engine's execute() with the stored block.
      return
  }
}

// The block.finished event: the stored outcome, as SSE subscribers and the transcript read it.
export function finishedEventData(b: Block, attachments: readonly Attachment[]) {
  return {
    block_id: b.id,
    position: b.position,
    duration_ms: b.durationMs,
    timed_out: b.timedOut,
    survived: b.survived,
    result: b.result,
    error: b.error,
    attachments: attachments.map((a) => a.id),
  }
}
