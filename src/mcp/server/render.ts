import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { Engine } from '../../engine/engine.js'
import type { AttachmentView, BlockView } from '../../engine/schemas.js'
import { clipStdout, renderOutcomeText } from '../../format/block-text.js'
import { rasterType } from '../../util/raster-type.js'
import { attachmentUri } from './resources.js'

type Content = CallToolResult['content'][number]

// An attachment as inline image content, when its bytes are a raster image (PNG, JPEG, GIF, WebP:
// the HTTP route's own test, util/raster-type.ts), typed as its bytes say. The stored media
// type is the sandbox's claim: inline by the claim, an SVG with script claimed as
// `image/svg+xml; charset=utf-8` went to the MCP host as an image (sixteenth pass). The claim only
// says which attachments are worth reading to look (as before, only those claiming an image are
// read); it never decides what goes inline nor its type.
function inlineImage(engine: Engine, sessionId: string, a: AttachmentView): Content | undefined {
  if (!a.media_type.trimStart().toLowerCase().startsWith('image/')) return undefined
  const { data } = engine.attachment(sessionId, a.id)
  const mimeType = rasterType(data)
  return mimeType === undefined ? undefined : { type: 'image', data: data.toString('base64'), mimeType }
}

// Images larger than this go out as links to their resource instead of inline data: MCP
// hosts put inline images into the model's context.
export const MAX_INLINE_IMAGE_BYTES = 4 * 1024 * 1024

// A finished block as MCP content: its text as the agent loop renders it (stdout clipped as the
// agent loop clips it, with the same notice), each raster image
// attachment (by its bytes) inline, every other attachment as a link to its resource; a failed block is
// `isError`.
export function blockResult(engine: Engine, block: BlockView): CallToolResult {
  const text = renderOutcomeText({
    stdout: clipStdout(block.stdout),
    result: block.result,
    value: block.value,
    error: block.error,
    timedOut: block.timed_out,
    survived: block.survived,
  })
  const content: Content[] = [{ type: 'text', text }]
  for (const a of block.attachments) {
    const uri = attachmentUri(block.session_id, a.id)
    const image = a.size <= MAX_INLINE_IMAGE_BYTES ? inlineImage(engine, block.session_id, a) : undefined
    if (image) {
      content.push(image)
    } else {
      content.push({
        type: 'resource_link',
        uri,
        name: a.name ?? a.id,
        mimeType: a.media_type,
        description: `attachment of block ${block.position} (${a.size} bytes)`,
      })
    }
  }
  return {
    content,
    isError: block.error !== null,
    _meta: { 'vis/session': block.session_id, 'vis/block': block.id },
  }
}

// A tool's JSON result, or its failure, as MCP content.
export function jsonResult(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }] }
}

export function errorResult(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true }
}
