// vis-runtime/langchain: the session as a LangChain.js structured tool (`@langchain/core` 1, an
// optional peer).
import type { DynamicStructuredTool } from '@langchain/core/tools'
import type { JSONSchema } from '@langchain/core/utils/json_schema'
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

const lc = await loadPeer('@langchain/core', '^1', 'langchain', () => import('@langchain/core/tools'))

const schema: JSONSchema = {
  type: 'object',
  properties: { code: { type: 'string', description: CODE_DESCRIPTION } },
  required: ['code'],
  additionalProperties: false,
}

// `tools: [pythonTool(session)]` for createAgent (or model.bindTools). The run's signal
// (config.signal) interrupts the block. LangChain's tool messages are text: attachments are named.
export function pythonTool(target: BlockTarget, options: PythonToolOptions = {}): DynamicStructuredTool {
  return lc.tool(
    async (input: { code: string }, config) =>
      (await runBlockForModel(target, input.code, options, config?.signal)).text,
    {
      name: options.name ?? TOOL_NAME,
      description: options.description ?? TOOL_DESCRIPTION,
      schema,
    },
  ) as unknown as DynamicStructuredTool
}
