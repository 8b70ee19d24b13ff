import { closeFd, readCapped, Tree } from '../confinement/beneath.js'
import type { BlockResult } from '../sessions/block-result.js'
import { checkpoint } from '../util/check-use-hook.js'
import { errorMessage } from '../util/errors.js'

// The most one outbox file may hold to be stored (read from disk, so past what vis_attach's
// inline bytes may carry: vis_guest/attach.py MAX_BYTES).
const MAX_OUTBOX_FILE_BYTES = 32 << 20

type OutboxRecord = { name: string; media_type: string; path: string }

const isOutboxRecord = (a: unknown): a is OutboxRecord =>
  typeof a === 'object' &&
  a !== null &&
  typeof (a as OutboxRecord).path === 'string' &&
  typeof (a as OutboxRecord).name === 'string' &&
  (a as { data_b64?: unknown }).data_b64 === undefined

// A file a block closed in its worker's outbox reaches the engine as a record naming it (the
// low-level session API hands that record to its caller as is). The engine stores bytes, so it
// reads the file here: the outbox is the sandbox's to change at any moment, so the file is
// opened once beneath the outbox's directory fd (no symlink followed anywhere, a regular file
// only) and read through that fd, never by its path.
export async function withOutboxBytes(outcome: BlockResult, outbox: string): Promise<BlockResult> {
  const list = outcome.attachments
  if (!list?.some(isOutboxRecord)) return outcome
  let tree: Tree | undefined
  try {
    tree = Tree.open(outbox)
    const out: unknown[] = []
    for (const a of list) out.push(isOutboxRecord(a) ? await readRecord(tree, a) : a)
    return { ...outcome, attachments: out }
  } catch (err) {
    const why = errorMessage(err)
    return {
      ...outcome,
      attachments: list.map((a) => (isOutboxRecord(a) ? { name: a.name, unreadable: why } : a)),
    }
  } finally {
    await tree?.close()
  }
}

async function readRecord(tree: Tree, a: OutboxRecord): Promise<unknown> {
  await checkpoint('outbox.read', a.name)
  const file = await tree.openFile(a.name)
  if (!file) return { name: a.name, unreadable: 'it was no longer a regular file in the outbox' }
  try {
    if (file.st.size > MAX_OUTBOX_FILE_BYTES) {
      return { name: a.name, unreadable: `it is ${file.st.size} bytes, over ${MAX_OUTBOX_FILE_BYTES}` }
    }
    // The guest may still be writing it: what is read is bounded, not what fstat said.
    const { data, over } = await readCapped(file.fd, MAX_OUTBOX_FILE_BYTES)
    if (over)
      return { name: a.name, unreadable: `it grew past ${MAX_OUTBOX_FILE_BYTES} bytes while it was read` }
    return { name: a.name, media_type: a.media_type, data_b64: data.toString('base64') }
  } finally {
    await closeFd(file.fd)
  }
}
