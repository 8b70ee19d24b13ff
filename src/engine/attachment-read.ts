import { close, read, readSync } from 'node:fs'
import { VisError } from '../util/errors.js'
import { type EngineCore, requireSession } from './engine-core.js'
import type { AttachmentView } from './schemas.js'
import { attachmentView } from './views.js'

// The attachment's stored row, checked to be of this session's blocks (one of another session is
// not found).
function ownAttachment(core: EngineCore, sessionId: string, attachmentId: string): void {
  requireSession(core, sessionId)
  const meta = core.store.attachments.get(attachmentId)
  const owner = meta ? core.store.blocks.get(meta.blockId)?.sessionId : undefined
  if (!meta || owner !== sessionId) {
    throw new VisError('attachment.not-found', `No attachment ${attachmentId} in session ${sessionId}.`, {
      sessionId,
      attachmentId,
    })
  }
}

// An attachment of a session's block with its bytes.
export function readAttachment(
  core: EngineCore,
  sessionId: string,
  attachmentId: string,
): { attachment: AttachmentView; data: Buffer } {
  ownAttachment(core, sessionId, attachmentId)
  const { attachment, data } = core.store.attachments.read(attachmentId)
  return { attachment: attachmentView(sessionId, attachment), data }
}

// How much of an attachment is read from its file at a time for an answer.
export const ATTACHMENT_PIECE_BYTES = 256 * 1024
// Enough of the start for util/raster-type.ts to know the format by.
const HEAD_BYTES = 16

// An attachment's bytes as an answer sends them: its first bytes (the format is judged by them) and
// its pieces, read from the file one at a time as the client takes them, so a client that reads
// slowly or stops holds one piece, not the whole file (the seventeenth pass found a second download
// of a large attachment in one session cut while the first drained: each was held whole). `close`
// (idempotent) lets go of the file; the pieces call it at their end.
export type AttachmentPieces = {
  attachment: AttachmentView
  size: number
  head: Uint8Array
  next(): Promise<Uint8Array | undefined>
  close(): void
}

export function openAttachment(core: EngineCore, sessionId: string, attachmentId: string): AttachmentPieces {
  ownAttachment(core, sessionId, attachmentId)
  const opened = core.store.attachments.open(attachmentId)
  const attachment = attachmentView(sessionId, opened.attachment)
  const size = opened.attachment.size
  if ('data' in opened) {
    const data = opened.data
    let at = 0
    return {
      attachment,
      size,
      head: data.subarray(0, HEAD_BYTES),
      next: async () => {
        if (at >= data.byteLength) return undefined
        const piece = data.subarray(at, at + ATTACHMENT_PIECE_BYTES)
        at += piece.byteLength
        return piece
      },
      close: () => undefined,
    }
  }
  let fd: number | undefined = opened.fd
  let at = 0
  const done = () => {
    if (fd === undefined) return
    close(fd, () => undefined)
    fd = undefined
  }
  const readAt = (into: Buffer, position: number) =>
    new Promise<number>((resolve, reject) => {
      if (fd === undefined) reject(new Error(`attachment ${attachmentId}: read after close`))
      else read(fd, into, 0, into.byteLength, position, (err, n) => (err ? reject(err) : resolve(n)))
    })
  const head = Buffer.alloc(Math.min(HEAD_BYTES, size))
  // The file was read through and checked a moment ago; its first bytes are there.
  readSync(opened.fd, head, 0, head.byteLength, 0)
  return {
    attachment,
    size,
    head,
    next: async () => {
      if (at >= size || fd === undefined) {
        done()
        return undefined
      }
      const piece = Buffer.allocUnsafe(Math.min(ATTACHMENT_PIECE_BYTES, size - at))
      const n = await readAt(piece, at)
      if (n === 0) {
        done()
        throw new VisError('db.blob-corrupt', `Attachment ${attachmentId} ended at ${at} of ${size} bytes.`, {
          sessionId,
          attachmentId,
        })
      }
      at += n
      return piece.subarray(0, n)
    },
    close: done,
  }
}
