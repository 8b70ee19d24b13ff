import { clearDraftView } from '../drafts/view.js'
import type { Session } from '../sessions/session.js'
import { VisError } from '../util/errors.js'
import {
  assertOpen,
  claim,
  type EngineCore,
  forget,
  liveFor,
  refuseClosed,
  requireSession,
} from './engine-core.js'
import type { Live } from './live.js'
import { reopenWorker } from './worker-start.js'

// A session's worker in this process: started on demand (worker-start.ts), replaced when the
// draft view changes, dropped when the session closes or its lease is lost.

export function retiredError(live: Live, session: Session): VisError {
  return new VisError(
    'worker.retired',
    `Session ${live.id}'s worker was retired (${session.retiredReason ?? session.state}); close it and create a new session.`,
    { sessionId: live.id },
  )
}

export async function ensureWorker(core: EngineCore, live: Live): Promise<Session> {
  if (live.session) {
    if (live.session.state !== 'ready') throw retiredError(live, live.session)
    return live.session
  }
  if (!live.opening) {
    live.opening = reopenWorker(core.workerDeps, live).finally(() => {
      live.opening = undefined
    })
  }
  return live.opening
}

// The session's runtime session (its worker started or reopened as needed): what the agent
// loop reads tool specs from and installs its tool gate on.
export async function runtimeSession(core: EngineCore, sessionId: string): Promise<Session> {
  assertOpen(core)
  refuseClosed(requireSession(core, sessionId))
  claim(core, sessionId)
  return ensureWorker(core, liveFor(core, sessionId))
}

// The session's worker if one runs in this process now (none is started for it).
export function liveSession(core: EngineCore, sessionId: string): Session | undefined {
  const s = core.lives.get(sessionId)?.session
  return s?.state === 'ready' ? s : undefined
}

// Ends the worker (one still opening once it opened), waits for its queue to drain (a running
// block ends with an error) and forgets the session's live state.
export async function disposeLive(core: EngineCore, live: Live): Promise<void> {
  const session = live.session ?? (await live.opening?.catch(() => undefined))
  await session?.dispose()
  await live.tail
  forget(core, live)
}

// Stops the session's worker without closing the session (a cluster node that lost the
// session's lease, src/cluster): a running block ends with an error, the next block anywhere
// starts a fresh worker from the defs snapshot.
export async function dropWorker(core: EngineCore, id: string): Promise<void> {
  const live = core.lives.get(id)
  if (!live) return
  await disposeLive(core, live)
  await core.extensions?.endSession(id)
}

// The worker is jailed for one view of the root (trunk or a draft): a switch ends it, and
// the next block starts a fresh one that restores the session's definitions (reopen).
export async function replaceWorker(core: EngineCore, id: string): Promise<void> {
  clearDraftView(id)
  await stopWorker(core, id, 'the draft state changed')
}

// Ends the session's worker (its threads, the processes it started) and keeps the session and
// its view: the next block starts a fresh worker.
export async function stopWorker(core: EngineCore, id: string, reason: string): Promise<void> {
  const live = core.lives.get(id)
  // The extension worker too, even alone (a slash command started it): it sees one view.
  await core.extensions?.endSession(id)
  if (!live) return
  const session = live.session ?? (await live.opening?.catch(() => undefined))
  live.off?.()
  live.off = undefined
  live.session = undefined
  if (session) {
    await session.dispose()
    core.log.append(id, 'worker.replaced', { reason })
  }
}
