// vis-runtime/ai-sdk: the session as a Vercel AI SDK tool (`ai` 6, an optional peer).
import type { Tool } from 'ai'
import {
  type BlockTarget,
  type BlockToolOutput,
  CODE_DESCRIPTION,
  type PythonToolOptions,
  runBlockForModel,
  TOOL_DESCRIPTION,
} from './block-tool.js'
import { loadPeer } from './peer.js'

export type { BlockTarget, BlockToolOutput, PythonToolOptions } from './block-tool.js'

const ai = await loadPeer('ai', '^6', 'ai-sdk', () => import('ai'))

// `tools: { python: pythonTool(session) }`: each call runs its code as a block in the session
// (globals persist between calls); the model reads the output, the value, an error with its
// excerpt and hints, and the attachments (as image parts with `attachments: 'parts'`).
export function pythonTool(
  target: BlockTarget,
  options: PythonToolOptions = {},
): Tool<{ code: string }, BlockToolOutput> {
  return ai.tool({
    description: options.description ?? TOOL_DESCRIPTION,
    inputSchema: ai.jsonSchema<{ code: string }>({
      type: 'object',
      properties: { code: { type: 'string', description: CODE_DESCRIPTION } },
      required: ['code'],
      additionalProperties: false,
    }),
    execute: ({ code }, { abortSignal }) => runBlockForModel(target, code, options, abortSignal),
    toModelOutput: ({ output }) =>
      output.images.length === 0
        ? { type: 'text', value: output.text }
        : {
            type: 'content',
            value: [
              { type: 'text', text: output.text },
              ...output.images.map((i) => ({
                type: 'image-data' as const,
                data: i.data,
                mediaType: i.mediaType,
              })),
            ],
          },
  })
}
