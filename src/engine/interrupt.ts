import { cancelBlock, sessionBlock } from './block-queue.js'
import { type EngineCore, requireSession } from './engine-core.js'
import type { InterruptResult } from './schemas.js'

// Interrupts the running block. Naming a block makes it safe against races: a named block that
// is not the running one is left alone (and cancelled if it is still queued).
export async function interrupt(
  core: EngineCore,
  sessionId: string,
  opts: { blockId?: string },
): Promise<InterruptResult> {
  requireSession(core, sessionId)
  // Run by another process on this home: it interrupts (ownership.ts).
  const owner = core.ownership?.ownerElsewhere(sessionId)
  if (owner) {
    return (await core.ownership!.forward(owner, {
      op: 'interrupt',
      sessionId,
      ...(opts.blockId === undefined ? {} : { blockId: opts.blockId }),
    })) as InterruptResult
  }
  const live = core.lives.get(sessionId)
  const current = live?.currentBlock ?? null
  if (opts.blockId !== undefined && opts.blockId !== current) {
    const named = sessionBlock(core, sessionId, opts.blockId)
    const cancelled =
      named.status === 'queued' && cancelBlock(core, sessionId, opts.blockId).status === 'done'
    return { landed: false, retired: false, cancelled, block_id: opts.blockId }
  }
  if (!live?.session || current === null) {
    return { landed: false, retired: false, cancelled: false, block_id: current }
  }
  const r = await live.session.interrupt()
  return { landed: r.landed, retired: r.retired, cancelled: false, block_id: current }
}
