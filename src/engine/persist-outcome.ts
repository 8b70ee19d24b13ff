import type { Block, FinishBlockInput, Store } from '../persistence/index.js'

// The outcome, its attachments and the session's defs snapshot commit together: after a
// crash the defs are never ahead of or behind the last finished block.
export function persistFinish(
  store: Store,
  block: Block,
  finish: FinishBlockInput,
  snapshot: unknown,
): Block {
  const write = () =>
    store.transaction(() => {
      const b = store.blocks.finish(block.id, finish)
      if (snapshot !== undefined && snapshot !== null) store.defs.write(block.sessionId, snapshot)
      return b
    })
  try {
    return write()
  } catch (err) {
    // An outcome the store refuses (a bad attachment, an oversized snapshot) must not leave the
    // block running forever: keep the block, with the reason, and drop the rest.
    if (snapshot !== undefined || finish.attachments?.length) {
      return store.blocks.finish(block.id, {
        ...finish,
        attachments: [],
        error: finish.error ?? { code: 'block.persist-failed', message: (err as Error).message },
      })
    }
    throw err
  }
}
