import { z } from 'zod'
import type { Attachment } from './attachments.js'
import { type Block, BlockErrorSchema, BlockStatusSchema } from './blocks.js'
import { type JsonValue, JsonValueSchema } from './json.js'
import type { Store } from './store.js'
import { TurnStatusSchema } from './turns.js'

// The one canonical shape of an exported session. The Markdown transcript is rendered from it,
// `vis sessions export` prints it, and it parses back with this schema unchanged. Times are
// ISO 8601 (UTC); attachment bytes are left out, their checksum and size identify them.
const Iso = z.string().datetime()

export const TranscriptAttachmentSchema = z
  .object({
    id: z.string(),
    position: z.number().int(),
    mediaType: z.string(),
    name: z.string().nullable(),
    size: z.number().int().min(0),
    sha256: z.string().length(64),
    storage: z.enum(['inline', 'file']),
  })
  .strict()

export const TranscriptBlockSchema = z
  .object({
    id: z.string(),
    position: z.number().int(),
    turnId: z.string().nullable(),
    iterationId: z.string().nullable(),
    status: BlockStatusSchema,
    code: z.string(),
    stdout: z.string(),
    stderr: z.string(),
    result: JsonValueSchema.nullable(),
    error: BlockErrorSchema.nullable(),
    durationMs: z.number().int().nullable(),
    timedOut: z.boolean(),
    createdAt: Iso,
    finishedAt: Iso.nullable(),
    attachments: z.array(TranscriptAttachmentSchema),
  })
  .strict()

export const TranscriptIterationSchema = z
  .object({ id: z.string(), position: z.number().int(), createdAt: Iso })
  .strict()

export const TranscriptTurnSchema = z
  .object({
    id: z.string(),
    position: z.number().int(),
    request: JsonValueSchema.nullable(),
    status: TurnStatusSchema,
    createdAt: Iso,
    finishedAt: Iso.nullable(),
    iterations: z.array(TranscriptIterationSchema),
  })
  .strict()

export const TranscriptSchema = z
  .object({
    format: z.literal('vis-transcript'),
    version: z.literal(1),
    session: z
      .object({
        id: z.string(),
        title: z.string().nullable(),
        policy: JsonValueSchema,
        createdAt: Iso,
        closedAt: Iso.nullable(),
      })
      .strict(),
    turns: z.array(TranscriptTurnSchema),
    blocks: z.array(TranscriptBlockSchema),
  })
  .strict()

export type Transcript = z.infer<typeof TranscriptSchema>
export type TranscriptBlock = z.infer<typeof TranscriptBlockSchema>
export type TranscriptTurn = z.infer<typeof TranscriptTurnSchema>

// Stored times (ms since the epoch) as people and clients read them.
// The last conversion is kept: a block's row and its events mostly share one millisecond, and a
// pure function of its argument cannot go stale.
let lastMs = Number.NaN
let lastIso = ''
export const iso = (ms: number): string => {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString()
    lastMs = ms
  }
  return lastIso
}
export const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms))

// Reads the whole session in one read transaction, so the export is a consistent snapshot
// even while blocks are being written.
export function exportTranscript(store: Store, sessionId: string): Transcript {
  return store.db.transaction(() =>
    buildTranscript(
      store,
      sessionId,
      store.blocks.listBySession(sessionId),
      store.attachments.listBySession(sessionId),
      () => true,
    ),
  )()
}

// One page of a session's transcript, read the way the session view is (listSummaries): the
// last `limit` blocks before `beforePosition`, each field cut in the database to `maxChars`
// characters (a longer result or value left out, a longer error replaced by a note), so neither
// the read nor the text grows with what the sandbox printed (MCP's transcript resource); and
// only as many as fit `maxBytes` of JSON (json-bytes.ts, the session view's bound: a control
// character is six bytes of the JSON-RPC answer; sixteenth outsider pass: 37 MiB a read), the
// blocks' attachments counted as their Markdown lines (blocks.ts ATTACHMENT_BYTES: seventeenth
// outsider pass, 1000 names a block of control characters made one page past MCP's 16 MiB).
// `cut`: the positions of the blocks something was cut from; `before`: how many blocks precede.
export type TranscriptPage = { transcript: Transcript; cut: number[]; before: number; total: number }

export function exportTranscriptPage(
  store: Store,
  sessionId: string,
  options: { beforePosition: number; limit: number; maxChars: number; maxBytes: number },
): TranscriptPage {
  return store.db.transaction(() => {
    const page = store.blocks.listSummaries(sessionId, options)
    const positions = page.blocks.map((b) => b.position)
    const attachments =
      positions.length === 0
        ? []
        : store.attachments.listByBlockPositions(sessionId, Math.min(...positions), Math.max(...positions))
    const inPage = new Set(page.blocks.map((b) => b.turnId).filter((t) => t !== null))
    const first = page.blocks[0]?.createdAt
    const last = page.blocks.at(-1)?.createdAt
    const total = store.blocks.countBySession(sessionId)
    const isLastPage = total === page.before + page.blocks.length
    // A turn is shown with its blocks; a turn without blocks in the page is shown when it began
    // within the page's span (or after it, on the last page): its place in time.
    const shows = (t: { id: string; createdAt: number }) =>
      inPage.has(t.id) ||
      first === undefined ||
      ((page.before === 0 || t.createdAt >= first) && (isLastPage || t.createdAt <= (last ?? first)))
    const transcript = buildTranscript(store, sessionId, page.blocks, attachments, shows)
    return {
      transcript,
      cut: page.blocks.filter((b) => page.cut.has(b.id)).map((b) => b.position),
      before: page.before,
      total,
    }
  })()
}

function buildTranscript(
  store: Store,
  sessionId: string,
  blocks: readonly Block[],
  attachments: readonly Attachment[],
  showsTurn: (t: { id: string; createdAt: number }) => boolean,
): Transcript {
  const session = store.sessions.require(sessionId)
  const iterations = store.turns.listIterationsBySession(sessionId)
  const transcript: Transcript = {
    format: 'vis-transcript',
    version: 1,
    session: {
      id: session.id,
      title: session.title,
      policy: withoutPins(session.policy),
      createdAt: iso(session.createdAt),
      closedAt: isoOrNull(session.closedAt),
    },
    turns: store.turns
      .listBySession(sessionId)
      .filter(showsTurn)
      .map((t) => ({
        id: t.id,
        position: t.position,
        request: t.request,
        status: t.status,
        createdAt: iso(t.createdAt),
        finishedAt: isoOrNull(t.finishedAt),
        iterations: iterations
          .filter((i) => i.turnId === t.id)
          .map((i) => ({ id: i.id, position: i.position, createdAt: iso(i.createdAt) })),
      })),
    blocks: blocks.map((b) => ({
      id: b.id,
      position: b.position,
      turnId: b.turnId,
      iterationId: b.iterationId,
      status: b.status,
      code: b.code,
      stdout: b.stdout,
      stderr: b.stderr,
      result: b.result,
      error: b.error,
      durationMs: b.durationMs,
      timedOut: b.timedOut,
      createdAt: iso(b.createdAt),
      finishedAt: isoOrNull(b.finishedAt),
      attachments: attachments
        .filter((a) => a.blockId === b.id)
        .map((a) => ({
          id: a.id,
          position: a.position,
          mediaType: a.mediaType,
          name: a.name,
          size: a.size,
          sha256: a.sha256,
          storage: a.storage,
        })),
    })),
  }
  // Parsing our own output keeps the export and the schema from drifting apart.
  return TranscriptSchema.parse(transcript)
}

// The stored policy without the roots' pins (src/engine/stored-policy.ts): device and inode
// numbers of this host, which mean nothing in an exported transcript.
function withoutPins(policy: JsonValue): JsonValue {
  if (typeof policy !== 'object' || policy === null || Array.isArray(policy) || !('pins' in policy))
    return policy
  const { pins: _p, ...rest } = policy
  return rest
}
