import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { Engine } from '../../engine/engine.js'
import type { BlockView } from '../../engine/schemas.js'
import { clipStdout, renderOutcomeText } from '../../format/block-text.js'
import { attachmentUri } from './resources.js'

type Content = CallToolResult['content'][number]

// Images larger than this go out as links to their resource instead of inline data: MCP
// hosts put inline images into the model's context.
export const MAX_INLINE_IMAGE_BYTES = 4 * 1024 * 1024

// A finished block as MCP content: its text as the agent loop renders it (stdout clipped as the
// agent loop clips it, with the same notice), each image
// attachment inline, every other attachment as a link to its resource; a failed block is
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
    if (
      a.media_type.startsWith('image/') &&
      a.media_type !== 'image/svg+xml' &&
      a.size <= MAX_INLINE_IMAGE_BYTES
    ) {
      const { data } = engine.attachment(block.session_id, a.id)
      content.push({ type: 'image', data: data.toString('base64'), mimeType: a.media_type })
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
