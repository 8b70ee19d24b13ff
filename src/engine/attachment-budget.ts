import type { FinishBlockInput } from '../persistence/index.js'

// The engine's default bound (EngineOptions.maxSessionAttachmentsMb).
export const DEFAULT_SESSION_ATTACHMENTS_MB = 512

// The catalogue code a block's refused attachments are noted with.
const LIMIT = 'attachment.session-limit'

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
  const list = finish.attachments ?? []
  if (list.length === 0) return finish
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
