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
  // Recoverable: the catch below goes on after a failure, so this is a real savepoint even in
  // the caller's atomic transaction; nothing in it catches, so what it nests runs flat.
  const write = () =>
    store.transaction(
      () => {
        const b = record(finish)
        if (snapshot !== undefined && snapshot !== null) store.defs.write(block.sessionId, snapshot)
        return b
      },
      { recoverable: true, nested: 'atomic' },
    )
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
