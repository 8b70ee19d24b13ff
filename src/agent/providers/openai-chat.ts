import OpenAI from 'openai'
import type {
  ChatCompletionContentPart,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions'
import type { CompleteRequest, Message, ModelReply, Part, Provider, ToolCall } from './types.js'
import { PYTHON_TOOL, zeroUsage } from './types.js'

export type OpenAIOptions = {
  model: string
  baseURL?: string
  apiKey?: string
  name?: string
  images?: boolean
}

const TOOL: ChatCompletionTool = {
  type: 'function',
  function: {
    name: PYTHON_TOOL.name,
    description: PYTHON_TOOL.description,
    parameters: PYTHON_TOOL.parameters,
  },
}

const textOf = (parts: Part[]): string =>
  parts
    .filter((p): p is Extract<Part, { type: 'text' }> => p.type === 'text')
    .map((p) => p.text)
    .join('\n')
const imagesOf = (parts: Part[]) =>
  parts.filter((p): p is Extract<Part, { type: 'image' }> => p.type === 'image')

function userContent(parts: Part[]): string | ChatCompletionContentPart[] {
  if (parts.every((p) => p.type === 'text')) return textOf(parts)
  return parts.map((p) =>
    p.type === 'text'
      ? { type: 'text' as const, text: p.text }
      : { type: 'image_url' as const, image_url: { url: `data:${p.mediaType};base64,${p.data}` } },
  )
}

// Chat Completions has no images in tool messages: they follow as a user message.
export function chatMessages(system: string, messages: readonly Message[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [{ role: 'system', content: system }]
  for (const m of messages) {
    if (m.role === 'user') out.push({ role: 'user', content: userContent(m.content) })
    else if (m.role === 'assistant') {
      out.push({
        role: 'assistant',
        content: m.text === '' && m.toolCalls.length > 0 ? null : m.text,
        ...(m.toolCalls.length > 0
          ? {
              tool_calls: m.toolCalls.map((c) => ({
                id: c.id,
                type: 'function' as const,
                function: { name: c.name, arguments: c.arguments },
              })),
            }
          : {}),
      })
    } else {
      out.push({ role: 'tool', tool_call_id: m.callId, content: textOf(m.content) })
      const images = imagesOf(m.content)
      if (images.length > 0) out.push({ role: 'user', content: userContent(images) })
    }
  }
  return out
}

// OpenAI Chat Completions (and every OpenAI-compatible local server), streamed.
export class OpenAIChatProvider implements Provider {
  readonly name: string
  readonly model: string
  readonly images: boolean
  private readonly client: OpenAI

  constructor(opts: OpenAIOptions) {
    this.name = opts.name ?? 'openai'
    this.model = opts.model
    this.images = opts.images ?? true
    // The loop retries itself (honouring retry-after, counting failures): the SDK must not.
    this.client = new OpenAI({
      apiKey: opts.apiKey ?? 'none',
      baseURL: opts.baseURL,
      maxRetries: 0,
      timeout: 600_000,
    })
  }

  async complete(req: CompleteRequest): Promise<ModelReply> {
    const { data: stream, request_id } = await this.client.chat.completions
      .create(
        {
          model: this.model,
          messages: chatMessages(req.system, req.messages),
          stream: true,
          stream_options: { include_usage: true },
          ...(req.tools ? { tools: [TOOL], tool_choice: req.toolChoice } : {}),
        },
        { signal: req.signal },
      )
      .withResponse()
    let text = ''
    let id: string | null = null
    let stop: string | null = null
    const usage = zeroUsage()
    // Argument fragments arrive per tool call index and are concatenated in order.
    const calls = new Map<number, ToolCall>()
    for await (const chunk of stream) {
      req.onDelta('')
      id ??= chunk.id ?? null
      if (chunk.usage) {
        usage.input = chunk.usage.prompt_tokens ?? 0
        usage.output = chunk.usage.completion_tokens ?? 0
        usage.cached = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0
        usage.reasoning = chunk.usage.completion_tokens_details?.reasoning_tokens ?? 0
      }
      const choice = chunk.choices?.[0]
      if (!choice) continue
      if (choice.finish_reason) stop = choice.finish_reason
      const delta = choice.delta
      if (delta?.content) {
        text += delta.content
        req.onDelta(delta.content)
      }
      for (const tc of delta?.tool_calls ?? []) {
        const cur = calls.get(tc.index) ?? { id: '', name: '', arguments: '' }
        if (tc.id) cur.id = tc.id
        if (tc.function?.name) cur.name += tc.function.name
        if (tc.function?.arguments) cur.arguments += tc.function.arguments
        calls.set(tc.index, cur)
      }
    }
    const toolCalls = [...calls.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([i, c]) => ({ ...c, id: c.id || `call_${i}` }))
    return { text, toolCalls, usage, requestId: request_id ?? id, stop }
  }

  async ping(signal: AbortSignal): Promise<string> {
    const r = await this.client.models.list({ signal })
    const ids = r.data.map((m) => m.id)
    return ids.includes(this.model)
      ? `answers; model ${this.model} is listed`
      : `answers; model ${this.model} is not among its ${ids.length} listed models`
  }
}
