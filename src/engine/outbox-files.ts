import { closeFd, readCapped, Tree } from '../confinement/beneath.js'
import type { BlockResult } from '../sessions/block-result.js'
import { checkpoint } from '../util/check-use-hook.js'
import { errorMessage } from '../util/errors.js'

// The most one outbox file may hold to be stored (read from disk, so past what vis_attach's
// inline bytes may carry: vis_guest/attach.py MAX_BYTES).
export const MAX_OUTBOX_FILE_BYTES = 32 << 20
// What one block's outbox may hand the host in all. The host reads these files into its own
// memory and stores them in its database, and the disk budget does not see what they cost: it
// counts allocated blocks, and a sparse file (`truncate`) allocates none yet reads as its whole
// size. So a block's outbox is bounded by the files' apparent sizes (fstat on the open fd,
// before any read), in count and in total, and each file is taken once. The record list is the
// guest's answer (a block can forge it), so these bounds are the host's own.
export const MAX_OUTBOX_FILES = 100
export const MAX_OUTBOX_TOTAL_BYTES = 64 << 20
// The catalogue code a refused outbox file's note names.
const LIMIT = 'attachment.outbox-limit'

type OutboxRecord = { name: string; media_type: string; path: string }

const isOutboxRecord = (a: unknown): a is OutboxRecord =>
  typeof a === 'object' &&
  a !== null &&
  typeof (a as OutboxRecord).path === 'string' &&
  typeof (a as OutboxRecord).name === 'string' &&
  (a as { data_b64?: unknown }).data_b64 === undefined

// An outbox file the engine read: its bytes as read (no base64 round trip through the host's
// memory). block-finish.ts takes it as it takes a guest attachment.
export type OutboxBytes = { name: string; media_type: string; bytes: Buffer }

export const isOutboxBytes = (a: unknown): a is OutboxBytes =>
  typeof a === 'object' && a !== null && Buffer.isBuffer((a as OutboxBytes).bytes)

// What this block's outbox has handed over so far.
type Taken = { names: Set<string>; files: Set<string>; count: number; bytes: number }

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
    const taken: Taken = { names: new Set(), files: new Set(), count: 0, bytes: 0 }
    const out: unknown[] = []
    let past: { first: string; more: number } | undefined
    for (const a of list) {
      if (!isOutboxRecord(a)) out.push(a)
      else if (past) past.more++
      else if (taken.count >= MAX_OUTBOX_FILES) past = { first: a.name, more: 0 }
      else out.push(await readRecord(tree, a, taken))
    }
    // One note for every record past the count, whatever their number (a forged answer may
    // list a file 100 000 times): none of them is opened.
    if (past) {
      out.push({
        name: past.first,
        unreadable: `a block hands over at most ${MAX_OUTBOX_FILES} outbox files (${LIMIT}), so neither it nor the ${past.more} after it were read; hand over fewer, or pack them into one archive`,
      })
    }
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

async function readRecord(tree: Tree, a: OutboxRecord, taken: Taken): Promise<unknown> {
  // Every record counts, a repeated one too.
  taken.count++
  if (taken.names.has(a.name))
    return { name: a.name, unreadable: `it was handed over twice in one block (${LIMIT}); it is kept once` }
  taken.names.add(a.name)
  await checkpoint('outbox.read', a.name)
  const file = await tree.openFile(a.name)
  if (!file) return { name: a.name, unreadable: 'it was no longer a regular file in the outbox' }
  try {
    // The same file under another name (a hard link, `./x` beside `x`) is the same bytes.
    const id = `${file.st.dev}:${file.st.ino}`
    if (taken.files.has(id))
      return { name: a.name, unreadable: `it is a file this block already handed over (${LIMIT})` }
    taken.files.add(id)
    if (file.st.size > MAX_OUTBOX_FILE_BYTES) {
      return { name: a.name, unreadable: `it is ${file.st.size} bytes, over ${MAX_OUTBOX_FILE_BYTES}` }
    }
    const left = MAX_OUTBOX_TOTAL_BYTES - taken.bytes
    if (file.st.size > left) {
      return {
        name: a.name,
        unreadable: `it is ${file.st.size} bytes (apparent size), past the ${MAX_OUTBOX_TOTAL_BYTES} bytes one block's outbox files may hold in all (${left} left; ${LIMIT}); save large results under a root`,
      }
    }
    // The guest may still be writing it: what is read is bounded, not what fstat said.
    const cap = Math.min(MAX_OUTBOX_FILE_BYTES, left)
    const { data, over } = await readCapped(file.fd, cap)
    if (over) return { name: a.name, unreadable: `it grew past ${cap} bytes while it was read` }
    taken.bytes += data.length
    const read: OutboxBytes = { name: a.name, media_type: a.media_type, bytes: data }
    return read
  } finally {
    await closeFd(file.fd)
  }
}
