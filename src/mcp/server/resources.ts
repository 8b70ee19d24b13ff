import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { ReadResourceResult, Resource } from '@modelcontextprotocol/sdk/types.js'
import type { Engine } from '../../engine/engine.js'
import {
  BLOCK_POSITION_MAX,
  SESSION_VIEW_BLOCK_CHARS,
  SESSION_VIEW_DEFAULT_BLOCKS,
} from '../../engine/schemas.js'
import {
  ATTACHMENT_BYTES,
  exportTranscriptPage,
  jsonBytes,
  renderMarkdown,
  SESSION_PAGE_BYTES,
  type TranscriptPage,
} from '../../persistence/index.js'
import { VisError } from '../../util/errors.js'
import { type ReadGate, resourceReads } from './read-gate.js'
import type { ClientSessions } from './sessions.js'

// Each session a client created is readable as resources: its transcript (Markdown, as
// `vis sessions export` prints it) and every attachment its blocks produced.
export const transcriptUri = (sessionId: string) =>
  `vis://sessions/${encodeURIComponent(sessionId)}/transcript`
export const attachmentUri = (sessionId: string, attachmentId: string) =>
  `vis://sessions/${encodeURIComponent(sessionId)}/attachments/${encodeURIComponent(attachmentId)}`

// A transcript reads like the session view (thirteenth pass): its last blocks, each field cut to
// SESSION_VIEW_BLOCK_CHARS, earlier ones by `?before=<position>`; the whole history read and
// rendered at once grew with everything the sandbox printed (fourteenth pass).
const URI = /^vis:\/\/sessions\/([^/?]+)\/(transcript(?:\?before=(\d{1,10}))?|attachments\/([^/]+))$/

// At most this many resources answer one resources/list; `nextCursor` leads to the rest. A
// client's sessions and their attachments have no count bound of their own (many small
// attachments fit the byte budget), so one answer listing them all grew without end.
export const RESOURCES_PAGE = 500

// A cursor says where the next page starts: the index of a session among the client's sessions
// (in the order it made them; that list only grows) and how many of that session's resources
// (its transcript, then its attachments in block order) the pages before held. The position
// alone was the whole cursor, its shape the only check, so any position a client wrote (one
// that skips the transcript, or spelled with leading zeros, padding or characters the decoder
// drops) was answered as a page (sixteenth pass). Now a cursor carries an HMAC, under a key made
// at random when the process starts, of the position and the MCP session it was given to
// (ClientSessions.cursorScope): only a cursor this server gave this MCP session verifies, and
// only in the one spelling it was given in.
const CURSOR_KEY = randomBytes(32)
const TAG_BYTES = 16
const CURSOR = /^(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,14})\.([A-Za-z0-9_-]{22})$/

const cursorTag = (scope: string, session: number, skip: number) =>
  createHmac('sha256', CURSOR_KEY)
    .update(`${scope}\n${session}.${skip}`)
    .digest()
    .subarray(0, TAG_BYTES)
    .toString('base64url')

const cursorOf = (scope: string, session: number, skip: number) =>
  `${session}.${skip}.${cursorTag(scope, session, skip)}`

function parseCursor(cursor: string, scope: string, sessionCount: number): [number, number] {
  const m = cursor.length > 64 ? null : CURSOR.exec(cursor)
  if (m) {
    const session = Number(m[1])
    const skip = Number(m[2])
    // Compared as the text the server wrote (both 22 characters), so no other spelling of the
    // tag's bytes passes.
    const given = Buffer.from(m[3]!, 'latin1')
    const want = Buffer.from(cursorTag(scope, session, skip), 'latin1')
    if (timingSafeEqual(given, want) && session <= sessionCount) return [session, skip]
  }
  throw new VisError(
    'mcp.invalid-cursor',
    'That resources/list cursor is not one this server gave this client; list again without a cursor.',
    { cursor: cursor.slice(0, 80) },
  )
}

// Read from SQL only (Engine.sessionResources): counts and attachment metadata, never a block's
// output or value, and never more than a page of attachments; clients list on connect and on
// every list_changed, for every session they made.
export function listResources(
  engine: Engine,
  sessions: ClientSessions,
  cursor?: string,
  pageSize: number = RESOURCES_PAGE,
): { resources: Resource[]; nextCursor?: string } {
  const created = sessions.created
  const scope = sessions.cursorScope
  let [index, skip] = cursor === undefined ? [0, 0] : parseCursor(cursor, scope, created.length)
  const out: Resource[] = []
  for (; index < created.length; index++, skip = 0) {
    if (out.length === pageSize) return { resources: out, nextCursor: cursorOf(scope, index, skip) }
    const id = created[index]!
    const withTranscript = skip === 0
    // Attachments that fit this page; one more is read to know whether any remain.
    const room = pageSize - out.length - (withTranscript ? 1 : 0)
    const { view, blockCount, attachments } = engine.sessionResources(id, {
      offset: withTranscript ? 0 : skip - 1,
      limit: room + 1,
    })
    if (withTranscript) {
      out.push({
        uri: transcriptUri(id),
        name: `${id} transcript`,
        title: view.title ?? id,
        mimeType: 'text/markdown',
        description: `Every block of session ${id} with its output (${blockCount} blocks, ${view.state}).`,
      })
    }
    const taken = attachments.slice(0, room)
    for (const a of taken) {
      out.push({
        uri: attachmentUri(id, a.id),
        name: a.name ?? a.id,
        mimeType: a.mediaType,
        size: a.size,
        description: `attachment of block ${a.blockPosition} of session ${id}`,
      })
    }
    if (attachments.length > room) {
      return {
        resources: out,
        nextCursor: cursorOf(scope, index, skip + (withTranscript ? 1 : 0) + taken.length),
      }
    }
  }
  return { resources: out }
}

// What one resources/read answer may come to, in bytes as sent: the bound of the event stream a
// /mcp POST is answered on (src/http/sse.ts DEFAULT_MAX_QUEUED_BYTES; `vis serve` passes its own
// configured bound), past which `boundedStream` closes the connection and the client learns
// nothing. The stdio server keeps the same bound, so a resource reads alike over both.
export const RESOURCE_ANSWER_BYTES = 16 * 2 ** 20
// Room kept in an answer for what surrounds the resource's text (the JSON-RPC envelope, the
// event's `event:`/`data:` lines), beyond the URI, media type and id measured for each answer.
const ENVELOPE_SLACK = 256

export type ReadOptions = {
  // The most one answer may come to (RESOURCE_ANSWER_BYTES unless the server says otherwise).
  answerBytes?: number
  // The request's id, echoed in its answer (a client may make it long).
  requestId?: string | number
  // The request's cancellation: a read waiting for room is dropped.
  signal?: AbortSignal
  // The gate a read reserves its bytes at (the process's own unless a test gives one).
  gate?: ReadGate
}

// A read's answer, and what gives back the bytes it reserved (call it once the answer has been
// handed to the transport: server.ts).
export type ReadAnswer = { result: ReadResourceResult; release: () => void }

// One read of one kind, judged before a byte of its answer is built: what it will hold at its
// peak (`cost`, for the gate) and how to build it once that is reserved. Every kind is read
// through the one path below (readResource), so no kind is left out of the gate (eighteenth
// outsider pass: transcripts were answered ungated, and a batch of 100 reads of a ~4 MiB page
// raised the server's peak memory by ~400 MiB).
type ReadPlan = { cost: number; build: () => ReadResourceResult }

// The bytes of an answer around its resource's text or base64 (measured with an empty one).
const envelopeBytes = (uri: string, mimeType: string, requestId: string | number | undefined) =>
  Buffer.byteLength(
    JSON.stringify({
      result: { contents: [{ uri, mimeType, blob: '' }] },
      jsonrpc: '2.0',
      id: requestId ?? 0,
    }),
  ) + ENVELOPE_SLACK
const base64Bytes = (n: number) => Math.ceil(n / 3) * 4
const isText = (mimeType: string) => mimeType.startsWith('text/') || mimeType === 'application/json'

// The copies of its answer every read makes on the way out: the text or base64 in the result,
// the SDK's JSON-RPC text, the event string it is flattened into, and its bytes.
const ANSWER_COPIES = 4

// What an attachment read holds at its peak, for the gate: the file, then (text) its decoded
// string, and the answer ANSWER_COPIES times over, the answer at most `answerBytes`.
export const readCost = (size: number, text: boolean, answerBytes: number) =>
  text
    ? 3 * size + ANSWER_COPIES * Math.min(answerBytes, 6 * size + 2)
    : size + ANSWER_COPIES * base64Bytes(size)

export async function readResource(
  engine: Engine,
  sessions: ClientSessions,
  uri: string,
  options: ReadOptions = {},
): Promise<ReadAnswer> {
  const m = URI.exec(uri)
  const sessionId = m ? decodeURIComponent(m[1]!) : undefined
  // Another client's session reads exactly like one that does not exist.
  if (!m || sessionId === undefined || !sessions.owns(sessionId)) {
    throw new VisError('mcp.resource-not-found', `No resource ${uri} among this client's sessions.`, { uri })
  }
  const answerBytes = options.answerBytes ?? RESOURCE_ANSWER_BYTES
  const plan = m[2]!.startsWith('transcript')
    ? transcriptPlan(engine, sessionId, uri, m[3])
    : attachmentPlan(engine, sessionId, uri, decodeURIComponent(m[4]!), answerBytes, options.requestId)
  const release = await (options.gate ?? resourceReads).take(plan.cost, options.signal)
  try {
    return { result: plan.build(), release }
  } catch (err) {
    release()
    throw err
  }
}

// A transcript page (`?before=N`: the blocks before position N), weighed from SQL before it is
// read (transcriptPageBound) and reserved as its rows, its Markdown and the answer's copies.
function transcriptPlan(
  engine: Engine,
  sessionId: string,
  uri: string,
  beforeParam: string | undefined,
): ReadPlan {
  const before =
    beforeParam === undefined ? BLOCK_POSITION_MAX : Math.min(Number(beforeParam), BLOCK_POSITION_MAX)
  const options = {
    beforePosition: before,
    limit: SESSION_VIEW_DEFAULT_BLOCKS,
    maxChars: SESSION_VIEW_BLOCK_CHARS,
    maxBytes: SESSION_PAGE_BYTES,
  }
  const page = transcriptPageBound(engine.store, sessionId, options)
  return {
    cost: transcriptCost(page.bytes),
    build: () => {
      // The page read is the one weighed: a block finished since (while this read waited at the
      // gate) is left to the next read, or it would be built unreserved.
      const read = exportTranscriptPage(engine.store, sessionId, { ...options, beforePosition: page.below })
      const text = pageNote(sessionId, read) + renderMarkdown(read.transcript)
      return { contents: [{ uri, mimeType: 'text/markdown', text }] }
    },
  }
}

// What a transcript read holds at its peak: the page's rows as strings (two bytes a character at
// worst, and a character is at least a byte of the page's JSON), its Markdown, which is the
// result's text (the same again), and the answer's other copies (the SDK's JSON-RPC text, the
// event string, its bytes), each about the page's JSON. Not held to what one answer may carry:
// a page past it is built whole before the stream's bound closes the connection.
export const transcriptCost = (pageBytes: number) => 2 * 2 * pageBytes + (ANSWER_COPIES - 1) * pageBytes

// What a page can weigh as JSON, read from SQL without reading a block's text into this process:
// listSummaries (src/persistence/blocks.ts) lists the newest blocks while their fields' JSON
// (json-bytes.ts) stays within `maxBytes`, the newest whatever it weighs, from fields cut to
// `maxChars` characters (a longer result or value left out, a longer error replaced by a short
// note). A field's JSON is at most six bytes for each of its bytes in UTF-8 (a control
// character's `\u0001`; every other character is as many bytes or fewer), so each block is
// weighed as six times its cut fields' bytes, its attachments as listSummaries weighs them (a
// row each and six bytes a byte of their names and media types), and ROW_BYTES for its heading,
// fences and times; the page is then at most the sum over the blocks it may list, and at most
// `maxBytes` unless only the newest fits. PAGE_SLACK covers the session's heading, the page note
// and the turns shown with the blocks.
const ROW_BYTES = 2048
const PAGE_SLACK = 64 * 1024
const CUT_ERROR_BYTES = 256
const weighSql = `SELECT position,
    octet_length(substr(code, 1, ?)) + octet_length(substr(stdout, 1, ?))
      + CASE WHEN length(result) > ? THEN 0 ELSE coalesce(octet_length(result), 0) END
      + CASE WHEN length(value) > ? THEN 0 ELSE coalesce(octet_length(value), 0) END
      + CASE WHEN length(error) > ? THEN ${CUT_ERROR_BYTES} ELSE coalesce(octet_length(error), 0) END AS text_bytes,
    ${ATTACHMENT_BYTES} AS attachment_bytes
  FROM blocks WHERE session_id = ? AND position < ? ORDER BY position DESC LIMIT ?`

// `below`: the page's `beforePosition` held to the blocks weighed (past the newest of them; none
// when there were none: positions start at 1).
export function transcriptPageBound(
  store: Engine['store'],
  sessionId: string,
  options: { beforePosition: number; limit: number; maxChars: number; maxBytes: number },
): { bytes: number; below: number } {
  const c = options.maxChars
  const rows = store.db
    .prepare(weighSql)
    .all(c, c, c, c, c, sessionId, options.beforePosition, options.limit) as Array<{
    text_bytes: number | string | null
    position: number | string
    attachment_bytes: number | string | null
  }>
  let sum = 0
  let newest = 0
  for (const [i, r] of rows.entries()) {
    const weight = ROW_BYTES + 6 * Number(r.text_bytes ?? 0) + Number(r.attachment_bytes ?? 0)
    if (i === 0) newest = weight
    sum += weight
  }
  return {
    bytes: PAGE_SLACK + Math.min(sum, Math.max(options.maxBytes, newest)),
    below: rows.length === 0 ? 1 : Math.min(options.beforePosition, Number(rows[0]!.position) + 1),
  }
}

// An attachment, judged by its stored size before a byte is read (seventeenth outsider pass): a
// 20 MiB attachment was answered as 27 MB of base64 in one message, past the event stream's
// bound, and the client saw its connection closed with no word of why.
function attachmentPlan(
  engine: Engine,
  sessionId: string,
  uri: string,
  attachmentId: string,
  answerBytes: number,
  requestId: string | number | undefined,
): ReadPlan {
  // The ownership check engine.attachment makes (the session's own blocks only), made here so the
  // block row is read once and the size judged before the bytes are.
  const meta = engine.store.attachments.get(attachmentId)
  if (!meta || engine.store.blocks.get(meta.blockId)?.sessionId !== sessionId) {
    throw new VisError('attachment.not-found', `No attachment ${attachmentId} in session ${sessionId}.`, {
      sessionId,
      attachmentId,
    })
  }
  const mimeType = meta.mediaType
  const text = isText(mimeType)
  const envelope = envelopeBytes(uri, mimeType, requestId)
  // The smallest answer it could be: its bytes as they are (text of plain characters), or base64.
  const least = envelope + (text ? meta.size : base64Bytes(meta.size))
  if (least > answerBytes) throw tooLarge(uri, sessionId, attachmentId, meta.size, least, answerBytes)
  return {
    cost: readCost(meta.size, text, answerBytes),
    build: () => {
      // Checked against the recorded size as it is read (db.blob-corrupt otherwise).
      const { data } = engine.store.attachments.read(attachmentId)
      if (text) {
        const body = data.toString('utf8')
        // Text is sent as JSON: a control character is six bytes there. Past the bound as text, it
        // goes as base64 (4/3 of its size) when that fits, and is refused when neither does.
        const asText = envelope + jsonBytes(body)
        if (asText <= answerBytes) return { contents: [{ uri, mimeType, text: body }] }
        const asBase64 = envelope + base64Bytes(data.byteLength)
        if (asBase64 > answerBytes) {
          throw tooLarge(
            uri,
            sessionId,
            attachmentId,
            data.byteLength,
            Math.min(asText, asBase64),
            answerBytes,
          )
        }
      }
      return { contents: [{ uri, mimeType, blob: data.toString('base64') }] }
    },
  }
}

// Refuses an attachment no single answer can carry, naming where it is read whole: the HTTP
// API's attachment route (of `vis serve`, which serves the same store), which streams it.
function tooLarge(
  uri: string,
  sessionId: string,
  attachmentId: string,
  size: number,
  answer: number,
  answerBytes: number,
): VisError {
  const url = `/v1/sessions/${encodeURIComponent(sessionId)}/attachments/${encodeURIComponent(attachmentId)}`
  return new VisError(
    'mcp.resource-too-large',
    `Attachment ${uri} is ${size} bytes, ${answer} bytes as one resources/read answer, past the ` +
      `${answerBytes} bytes one answer may carry; fetch it whole over HTTP: GET ${url}.`,
    { uri, size, answerBytes: answer, maxAnswerBytes: answerBytes, url },
  )
}

// Said above a transcript that is not the whole session: which blocks it shows, which were cut,
// and where the earlier ones are. Nothing is said when it is the whole session, uncut.
function pageNote(sessionId: string, page: TranscriptPage): string {
  const blocks = page.transcript.blocks
  if (page.before === 0 && blocks.length === page.total && page.cut.length === 0) return ''
  const lines: string[] = []
  const first = blocks[0]?.position
  const last = blocks.at(-1)?.position
  lines.push(
    first === undefined
      ? `> No blocks here (${page.total} in the session).`
      : `> Blocks ${first} to ${last} of the session's ${page.total}, each field cut to ${SESSION_VIEW_BLOCK_CHARS} characters, the page to ${SESSION_PAGE_BYTES / 2 ** 20} MiB.`,
  )
  if (page.before > 0 && first !== undefined) {
    lines.push(`> The ${page.before} earlier blocks: ${transcriptUri(sessionId)}?before=${first}`)
  }
  if (page.cut.length > 0) {
    lines.push(
      `> Cut (a longer result or value left out, a longer error replaced by a note): blocks ${page.cut.join(', ')}.`,
    )
  }
  return `${lines.join('\n')}\n\n`
}
