// vis-runtime/openai-agents: the session as an OpenAI Agents SDK function tool
// (`@openai/agents` 0.3, an optional peer).
import type { FunctionTool } from '@openai/agents'
import {
  type BlockTarget,
  CODE_DESCRIPTION,
  type PythonToolOptions,
  runBlockForModel,
  TOOL_DESCRIPTION,
  TOOL_NAME,
} from './block-tool.js'
import { loadPeer } from './peer.js'

export type { BlockTarget, PythonToolOptions } from './block-tool.js'

const agents = await loadPeer('@openai/agents', '^0.3', 'openai-agents', () => import('@openai/agents'))

// The SDK's strict JSON schema: every property required, nothing else accepted.
const parameters = {
  type: 'object' as const,
  properties: { code: { type: 'string' as const, description: CODE_DESCRIPTION } },
  required: ['code'],
  additionalProperties: false as const,
}

// `tools: [pythonTool(session)]` on an Agent. The SDK hands its tools no abort signal: pass the
// one given to run() as `signal` to have a cancelled run interrupt the block.
export function pythonTool(
  target: BlockTarget,
  options: PythonToolOptions = {},
): FunctionTool<unknown, typeof parameters> {
  return agents.tool({
    name: options.name ?? TOOL_NAME,
    description: options.description ?? TOOL_DESCRIPTION,
    parameters,
    strict: true,
    execute: async (input) => {
      const out = await runBlockForModel(target, (input as { code: string }).code, options)
      if (out.images.length === 0) return out.text
      return [
        { type: 'text' as const, text: out.text },
        ...out.images.map((i) => ({
          type: 'image' as const,
          image: { data: i.data, mediaType: i.mediaType },
        })),
      ]
    },
  })
}
