import { z } from 'zod'

// The conversation in one neutral shape; each provider translates it to its own dialect.
export const PartSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('image'), mediaType: z.string(), data: z.string().describe('base64') }),
])
export type Part = z.infer<typeof PartSchema>

export const ToolCallSchema = z.object({
  id: z.string(),
  name: z.string(),
  // The raw argument text the model wrote (JSON when the model is well behaved).
  arguments: z.string(),
})
export type ToolCall = z.infer<typeof ToolCallSchema>

// What a reasoning model needs back to keep its chain of thought, kept exactly as it came (the
// content is opaque or signed: changing a byte makes the provider refuse it). Each dialect sends
// back only its own kinds.
// - OpenAI Responses: a reasoning item; its encrypted_content is the chain itself. Only items
//   carrying it can be sent back (requests are stateless, `store: false`).
export const ResponsesReasoningSchema = z
  .object({ type: z.literal('reasoning'), id: z.string(), encrypted_content: z.string() })
  .passthrough()
// - Anthropic extended thinking: a thinking block with the signature that proves it unmodified,
//   or a redacted_thinking block (encrypted). Sent back in order, before the tool_use they led to.
export const AnthropicThinkingSchema = z.union([
  z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string().min(1) }).passthrough(),
  z.object({ type: z.literal('redacted_thinking'), data: z.string() }).passthrough(),
])
// max_tokens of an Anthropic request unless the config says otherwise.
export const ANTHROPIC_MAX_TOKENS = 16_000

export const ReasoningItemSchema = z.union([ResponsesReasoningSchema, AnthropicThinkingSchema])
export type ReasoningItem = z.infer<typeof ReasoningItemSchema>

export type Message =
  | { role: 'user'; content: Part[] }
  | {
      role: 'assistant'
      text: string
      toolCalls: ToolCall[]
      reasoning?: ReasoningItem[]
      // `<provider>/<model>` that wrote the reasoning: it goes back to that model only.
      reasoningModel?: string
    }
  // The result of one tool call; images ride along as parts (providers that cannot put images
  // in a tool result send them in a user message right after).
  | { role: 'tool'; callId: string; content: Part[] }

export const UsageSchema = z.object({
  input: z.number().int().default(0),
  output: z.number().int().default(0),
  reasoning: z.number().int().default(0),
  cached: z.number().int().default(0),
})
export type Usage = z.infer<typeof UsageSchema>
export const zeroUsage = (): Usage => ({ input: 0, output: 0, reasoning: 0, cached: 0 })

export type ModelReply = {
  text: string
  toolCalls: ToolCall[]
  usage: Usage
  // The provider's id for the request (x-request-id / request-id header, else the reply's id).
  requestId: string | null
  stop: string | null
  // Items the provider needs back in the next requests (Responses reasoning, Anthropic
  // thinking); absent: none.
  reasoning?: ReasoningItem[]
}

// The one tool the model sees.
export const PYTHON_TOOL = {
  name: 'python_execution',
  description:
    'Run one block of Python in this session and read what it printed, its result and any error. ' +
    'Globals persist between blocks. Host tools are async functions: call them with or without await.',
  parameters: {
    type: 'object',
    properties: { code: { type: 'string', description: 'The Python source of the block.' } },
    required: ['code'],
    additionalProperties: false,
  },
} as const

export type CompleteRequest = {
  system: string
  messages: readonly Message[]
  // false: the model has no tool calling (the fenced-block fallback); the tool is not sent.
  tools: boolean
  // 'none' asks for a final answer without running anything (the iteration cap).
  toolChoice: 'auto' | 'none'
  signal: AbortSignal
  // Text as it streams; also called with '' on every chunk so the stall watchdog sees life.
  onDelta: (text: string) => void
}

export interface Provider {
  readonly name: string
  readonly model: string
  // Whether tool results may carry images.
  readonly images: boolean
  complete(req: CompleteRequest): Promise<ModelReply>
  // A cheap request proving the endpoint answers (vis doctor).
  ping(signal: AbortSignal): Promise<string>
}

// Both SDKs: the loop retries itself (honouring retry-after, counting failures), so the SDK must
// not; the stall watchdog, not a fixed timeout, ends a request that goes quiet.
export const sdkOptions = (o: { apiKey?: string; baseURL?: string }) => ({
  apiKey: o.apiKey ?? 'none',
  baseURL: o.baseURL,
  maxRetries: 0,
  timeout: 600_000,
})

// What `vis doctor` says of an endpoint that listed its models.
export const pingAnswer = (model: string, ids: readonly string[]): string =>
  ids.includes(model)
    ? `answers; model ${model} is listed`
    : `answers; model ${model} is not among its ${ids.length} listed models`
