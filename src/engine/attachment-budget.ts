import type { FinishBlockInput } from '../persistence/index.js'

// The engine's default bound (EngineOptions.maxSessionAttachmentsMb).
export const DEFAULT_SESSION_ATTACHMENTS_MB = 512

// The catalogue codes a block's refused attachments are noted with.
const LIMIT = 'attachment.session-limit'
const COUNT_LIMIT = 'attachment.block-count-limit'

// The most attachments one block keeps. Bytes are bounded (the guest's 6 MiB, the outbox's 100
// files, the family's budget below), but each attachment is also a row, a blob file and an entry
// in the block's result and its events, and 6 MiB of one-byte inline attachments made one block
// of ~100 000 of them (the guest's bound counts bytes only, and its answer can be forged).
export const MAX_BLOCK_ATTACHMENTS = 1000

const MiB = 1 << 20
const mib = (n: number) =>
  n < MiB ? `${Math.ceil(n / 1024)} KiB` : `${(n / MiB).toFixed(n % MiB === 0 ? 0 : 1)} MiB`

// The outbox bounds (outbox-files.ts) are per block, and what the engine keeps of a block goes
// into the vis home, which neither those bounds nor the disk budget (the roots' allocated blocks;
// a sparse outbox file has none) ever count again: a loop of blocks would fill the host's disk
// 64 MiB at a time. So a session's stored attachments are bounded in all, by the bytes the host
// stores (their sizes as read, a sparse file whole), at the engine's maxSessionAttachmentsMb. A block whose
// attachments would pass the bound keeps none of them (never a part: which ones a client gets
// must not depend on their order), and its output says why and what to do. A sub_loop child is a
// session of its own, made at will by a block: its attachments count against its top session's
// bound with the whole family's (AttachmentsRepo.familyBytes), or every child would bring a fresh
// allowance.
export function boundAttachments(
  finish: FinishBlockInput,
  // storedBytes is asked only for a block with attachments: a block's usual outcome has none, and
  // the sum is a query.
  bound: { storedBytes: () => number; limitMb: number },
): FinishBlockInput {
  if ((finish.attachments ?? []).length === 0) return finish
  finish = boundCount(finish)
  const list = finish.attachments ?? []
  const stored = bound.storedBytes()
  const adding = list.reduce((n, a) => n + a.data.byteLength, 0)
  const limit = bound.limitMb * MiB
  if (stored + adding <= limit) return finish
  const left = Math.max(0, limit - stored)
  const note =
    `[vis: this block's ${list.length === 1 ? '1 attachment' : `${list.length} attachments`} (${mib(adding)}) ${list.length === 1 ? 'was' : 'were'} not kept: ` +
    `the stored attachments of the session and its sub_loop family hold ${mib(stored)} of the ${bound.limitMb} MiB ` +
    `one session with its sub_loop children may keep ` +
    `(${mib(left)} left; ${LIMIT}); attach less (save large results under a root and name their paths), ` +
    `continue in a new session, or have the operator raise the engine's maxSessionAttachmentsMb]\n`
  return { ...finish, attachments: [], stdout: `${finish.stdout ?? ''}${note}` }
}

// Past MAX_BLOCK_ATTACHMENTS the first ones are kept, in the order the block made them (as the
// outbox keeps its first files), and the output says how many were not.
function boundCount(finish: FinishBlockInput): FinishBlockInput {
  const list = finish.attachments ?? []
  if (list.length <= MAX_BLOCK_ATTACHMENTS) return finish
  const note =
    `[vis: this block made ${list.length} attachments; the first ${MAX_BLOCK_ATTACHMENTS} were kept and the other ` +
    `${list.length - MAX_BLOCK_ATTACHMENTS} not (one block keeps at most ${MAX_BLOCK_ATTACHMENTS}; ${COUNT_LIMIT}): ` +
    `attach fewer, larger files (one archive, or save them under a root and name their paths)]\n`
  return {
    ...finish,
    attachments: list.slice(0, MAX_BLOCK_ATTACHMENTS),
    stdout: `${finish.stdout ?? ''}${note}`,
  }
}
