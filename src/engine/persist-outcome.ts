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
  // An outcome the store refuses (a bad attachment, a snapshot that is not JSON) must not leave
  // the block running forever: keep the block, with the reason, and drop the rest.
  const recoverable = snapshot !== undefined || (finish.attachments?.length ?? 0) > 0
  const refused = (err: unknown) =>
    record({
      ...finish,
      attachments: [],
      error: finish.error ?? { code: 'block.persist-failed', message: (err as Error).message },
    })
  if (finish.attachments?.length) return withAttachments(store, block, finish, snapshot, record, refused)
  // No attachments (a block's usual outcome): everything the store could refuse in it is
  // checked before the first write, so the write needs no savepoint to undo a half-done
  // attempt (one SAVEPOINT/RELEASE pair less per block inside the block's atomic commit).
  // What can still fail there is the database itself (the session deleted, the block finished
  // elsewhere), which a retry would meet again: it aborts the caller's transaction.
  let text: string | undefined
  try {
    store.blocks.checkFinish(finish)
    if (snapshot !== undefined && snapshot !== null) text = store.defs.encode(snapshot)
  } catch (err) {
    if (!recoverable) throw err
    return refused(err)
  }
  return store.transaction(
    () => {
      const b = record(finish)
      if (text !== undefined) store.defs.writeText(block.sessionId, text)
      return b
    },
    { nested: 'atomic' },
  )
}

// Attachments are checked as they are stored (their bytes may go to the blob store) and a
// snapshot after them, so a refusal can come mid-write: this write is a real savepoint, undone
// before the retry even inside the caller's atomic transaction.
function withAttachments(
  store: Store,
  block: Block,
  finish: FinishBlockInput,
  snapshot: unknown,
  record: (f: FinishBlockInput) => Block,
  refused: (err: unknown) => Block,
): Block {
  try {
    return store.transaction(
      () => {
        const b = record(finish)
        if (snapshot !== undefined && snapshot !== null) store.defs.write(block.sessionId, snapshot)
        return b
      },
      { recoverable: true, nested: 'atomic' },
    )
  } catch (err) {
    return refused(err)
  }
}
