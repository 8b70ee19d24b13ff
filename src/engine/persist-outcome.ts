import type { Block, FinishBlockInput, Store } from '../persistence/index.js'

// The outcome, its attachments and the session's defs snapshot commit together: after a
// crash the defs are never ahead of or behind the last finished block. `unstored`: the block's
// row was deferred and never written (src/engine/event-log.ts): it is inserted finished.
export function persistFinish(
  store: Store,
  block: Block,
  finish: FinishBlockInput,
  snapshot: unknown,
  unstored = false,
): Block {
  const start = { id: block.id, sessionId: block.sessionId, code: block.code, createdAt: block.createdAt }
  const record = (f: FinishBlockInput) =>
    unstored ? store.blocks.startFinished(start, f) : store.blocks.finish(block.id, f)
  const write = () =>
    store.transaction(() => {
      const b = record(finish)
      if (snapshot !== undefined && snapshot !== null) store.defs.write(block.sessionId, snapshot)
      return b
    })
  try {
    return write()
  } catch (err) {
    // An outcome the store refuses (a bad attachment, an oversized snapshot) must not leave the
    // block running forever: keep the block, with the reason, and drop the rest.
    if (snapshot !== undefined || finish.attachments?.length) {
      return record({
        ...finish,
        attachments: [],
        error: finish.error ?? { code: 'block.persist-failed', message: (err as Error).message },
      })
    }
    throw err
  }
}
