import type { AttachmentPieces } from '../engine/attachment-read.js'
import type { AttachmentView } from '../engine/schemas.js'
import { isRasterType, rasterType } from '../util/raster-type.js'

// How an attachment's bytes are served. They come from the sandbox, and so does the media type
// stored with them (the guest sniffs it, and guest code can claim any): an SVG or HTML
// attachment a person opens from its URL would otherwise run its script as this origin, read
// the page's token from localStorage, and drive the API. So only the raster formats the session page shows
// inline (PNG, JPEG, GIF, WebP), recognised here from their own bytes, are served inline, as the
// type their bytes say; everything else is a download (Content-Disposition: attachment). All of
// them carry `Content-Security-Policy: sandbox` (a document made from them has an opaque origin
// and runs no script) and `nosniff` (no browser second-guesses the type either way).

// A media type as a header may carry it: `type/subtype` with optional parameters, nothing that
// could end the header or smuggle another. The stored type's pattern only checks its start.
const MEDIA_TYPE = /^[\w.+-]+\/[\w.+-]+(?:\s*;\s*[\w.+-]+=(?:[\w.+-]+|"[^"\\\r\n]*"))*$/

export const ATTACHMENT_CSP = 'sandbox'

// `head`: the attachment's first bytes (its format is judged by them); `size`: all its bytes.
export function attachmentHeaders(
  attachment: AttachmentView,
  head: Uint8Array,
  size: number,
): Record<string, string> {
  const raster = rasterType(head)
  const filename = attachment.name ? `; filename*=UTF-8''${encodeURIComponent(attachment.name)}` : ''
  // A raster type the bytes are not (HTML claimed as image/png) is a lie, not a type: plain bytes.
  const claimed = attachment.media_type.split(';')[0]!.trim().toLowerCase()
  const lie = isRasterType(claimed) || !MEDIA_TYPE.test(attachment.media_type)
  const stored = lie ? 'application/octet-stream' : attachment.media_type
  return {
    'Content-Type': raster ?? stored,
    'Content-Length': String(size),
    'Content-Disposition': `${raster ? 'inline' : 'attachment'}${filename}`,
    'Content-Security-Policy': ATTACHMENT_CSP,
    'X-Content-Type-Options': 'nosniff',
    ETag: `"${attachment.sha256}"`,
  }
}

// The attachment's bytes as a response body, read a piece at a time as the socket takes them (the
// node adapter waits for 'drain' between pieces); the file is let go at the end, or when the client
// goes (the adapter cancels the body), or at once for an answer without a body (HEAD).
export function attachmentBody(pieces: AttachmentPieces): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const piece = await pieces.next()
          if (piece === undefined) controller.close()
          else controller.enqueue(piece)
        } catch (err) {
          pieces.close()
          controller.error(err)
        }
      },
      cancel() {
        pieces.close()
      },
    },
    { highWaterMark: 0 },
  )
}
