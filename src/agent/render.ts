import type { BlockView } from '../engine/schemas.js'
import {
  clipStdout,
  jsonText as json,
  type RenderedError,
  renderError,
  renderSurvived,
} from '../format/block-text.js'
import type { Part } from './providers/types.js'

export { clipStdout, STDOUT_CLIP_CHARS } from '../format/block-text.js'

const n = (x: number) => x.toLocaleString('en-US')

export type AttachmentBytes = (attachmentId: string) => { mediaType: string; data: Buffer } | undefined

// What the renderer reads of a block: the engine's view has it, and the framework adapters
// (src/adapters) build it from a runtime session's result, so both read the same.
export type RenderableBlock = Pick<BlockView, 'stdout' | 'result' | 'value' | 'error' | 'survived'> & {
  attachments: readonly Pick<BlockView['attachments'][number], 'id' | 'name' | 'media_type' | 'size'>[]
}

// What the model reads after a block: stdout (clipped, a notice only the agent loop gives), the
// result (or the value of a last expression after the output, as a notebook shows both), the error with its excerpt, the survived report, and images as image parts (other
// attachments are named). `clip` is how much stdout the model reads (an adapter's option).
export function renderBlock(
  block: RenderableBlock,
  bytes: AttachmentBytes,
  images: boolean,
  clip?: number,
): Part[] {
  const text: string[] = []
  if (block.stdout !== '') text.push(clipStdout(block.stdout, clip))
  const value = block.result ?? block.value
  if (value !== null && value !== undefined) text.push(`result: ${json(value)}`)
  // The error and the survived report read as they do on every surface (src/format/block-text.ts).
  const error = block.error as RenderedError | null
  if (error) text.push(renderError(error))
  const survived = renderSurvived(block.survived, error)
  if (survived) text.push(survived)
  const parts: Part[] = []
  for (const a of block.attachments) {
    if (images && a.media_type.startsWith('image/')) {
      const got = bytes(a.id)
      if (got) {
        parts.push({ type: 'image', mediaType: got.mediaType, data: got.data.toString('base64') })
        text.push(`[attachment ${a.name ?? a.id}: ${a.media_type}, ${n(a.size)} bytes, shown below]`)
        continue
      }
    }
    text.push(`[attachment ${a.name ?? a.id}: ${a.media_type}, ${n(a.size)} bytes]`)
  }
  if (text.length === 0) text.push('(the block ran: no output, no result)')
  return [{ type: 'text', text: text.join('\n') }, ...parts]
}
