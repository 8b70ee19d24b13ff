import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { ReadResourceResult, Resource } from '@modelcontextprotocol/sdk/types.js'
import type { Engine } from '../../engine/engine.js'
import {
  BLOCK_POSITION_MAX,
  SESSION_VIEW_BLOCK_CHARS,
  SESSION_VIEW_DEFAULT_BLOCKS,
} from '../../engine/schemas.js'
import {
  exportTranscriptPage,
  jsonBytes,
  renderMarkdown,
  SESSION_PAGE_BYTES,
  type TranscriptPage,
} from '../../persistence/index.js'
import { VisError } from '../../util/errors.js'
import { attachmentReads, type ReadGate } from './read-gate.js'
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

const noRelease = () => undefined

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

// What a read holds at its peak, for the gate: the file, then (text) its decoded string, and the
// answer four times over (the base64 or text in the result, the SDK's JSON-RPC text, the event
// string it is flattened into, and its bytes), the answer at most `answerBytes`.
export const readCost = (size: number, text: boolean, answerBytes: number) =>
  text ? 3 * size + 4 * Math.min(answerBytes, 6 * size + 2) : size + 4 * base64Bytes(size)

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
  if (m[2]!.startsWith('transcript')) {
    const before = m[3] === undefined ? BLOCK_POSITION_MAX : Math.min(Number(m[3]), BLOCK_POSITION_MAX)
    const page = exportTranscriptPage(engine.store, sessionId, {
      beforePosition: before,
      limit: SESSION_VIEW_DEFAULT_BLOCKS,
      maxChars: SESSION_VIEW_BLOCK_CHARS,
      maxBytes: SESSION_PAGE_BYTES,
    })
    const text = pageNote(sessionId, page) + renderMarkdown(page.transcript)
    return { result: { contents: [{ uri, mimeType: 'text/markdown', text }] }, release: noRelease }
  }
  const attachmentId = decodeURIComponent(m[4]!)
  const answerBytes = options.answerBytes ?? RESOURCE_ANSWER_BYTES
  // Judged by the stored size, before a byte is read (seventeenth outsider pass): a 20 MiB
  // attachment was answered as 27 MB of base64 in one message, past the event stream's bound,
  // and the client saw its connection closed with no word of why.
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
  const envelope = envelopeBytes(uri, mimeType, options.requestId)
  // The smallest answer it could be: its bytes as they are (text of plain characters), or base64.
  const least = envelope + (text ? meta.size : base64Bytes(meta.size))
  if (least > answerBytes) throw tooLarge(uri, sessionId, attachmentId, meta.size, least, answerBytes)
  const release = await (options.gate ?? attachmentReads).take(
    readCost(meta.size, text, answerBytes),
    options.signal,
  )
  try {
    // Checked against the recorded size as it is read (db.blob-corrupt otherwise).
    const { data } = engine.store.attachments.read(attachmentId)
    if (text) {
      const body = data.toString('utf8')
      // Text is sent as JSON: a control character is six bytes there. Past the bound as text, it
      // goes as base64 (4/3 of its size) when that fits, and is refused when neither does.
      const asText = envelope + jsonBytes(body)
      if (asText <= answerBytes) return { result: { contents: [{ uri, mimeType, text: body }] }, release }
      const asBase64 = envelope + base64Bytes(data.byteLength)
      if (asBase64 > answerBytes) {
        throw tooLarge(uri, sessionId, attachmentId, data.byteLength, Math.min(asText, asBase64), answerBytes)
      }
    }
    return { result: { contents: [{ uri, mimeType, blob: data.toString('base64') }] }, release }
  } catch (err) {
    release()
    throw err
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
