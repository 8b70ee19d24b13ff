import OpenAI from 'openai'
import type {
  ChatCompletionContentPart,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions'
import { breather, ReplyBuilder } from './reply.js'
import type { CompleteRequest, Message, ModelReply, Part, Provider } from './types.js'
import { PYTHON_TOOL, pingAnswer, sdkOptions } from './types.js'

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
function chatMessage(m: Message): ChatCompletionMessageParam[] {
  if (m.role === 'user') return [{ role: 'user', content: userContent(m.content) }]
  if (m.role === 'assistant') {
    return [
      {
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
      },
    ]
  }
  const out: ChatCompletionMessageParam[] = [
    { role: 'tool', tool_call_id: m.callId, content: textOf(m.content) },
  ]
  const images = imagesOf(m.content)
  if (images.length > 0) out.push({ role: 'user', content: userContent(images) })
  return out
}

// Each request sends the session's whole history, and a message never changes once it is in it
// (a compaction replaces messages, it does not edit them): each is converted once.
const converted = new WeakMap<Message, ChatCompletionMessageParam[]>()

export function chatMessages(system: string, messages: readonly Message[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [{ role: 'system', content: system }]
  for (const m of messages) {
    let c = converted.get(m)
    if (c === undefined) {
      c = chatMessage(m)
      converted.set(m, c)
    }
    out.push(...c)
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
    this.client = new OpenAI(sdkOptions(opts))
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
    const reply = new ReplyBuilder(req.onDelta)
    const breathe = breather()
    for await (const chunk of stream) {
      await breathe()
      req.onDelta('')
      reply.id ??= chunk.id ?? null
      if (chunk.usage) {
        reply.usage.input = chunk.usage.prompt_tokens ?? 0
        reply.usage.output = chunk.usage.completion_tokens ?? 0
        reply.usage.cached = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0
        reply.usage.reasoning = chunk.usage.completion_tokens_details?.reasoning_tokens ?? 0
      }
      const choice = chunk.choices?.[0]
      if (!choice) continue
      if (choice.finish_reason) reply.stop = choice.finish_reason
      if (choice.delta?.content) reply.addText(choice.delta.content)
      // A refusal streams in its own field: it is the model's answer, not an empty reply.
      if (choice.delta?.refusal) reply.addText(choice.delta.refusal)
      for (const tc of choice.delta?.tool_calls ?? []) {
        reply.addCall(tc.index ?? reply.indexOf(tc.id), {
          id: tc.id,
          name: tc.function?.name,
          arguments: tc.function?.arguments,
        })
      }
    }
    return reply.finish(request_id)
  }

  async ping(signal: AbortSignal): Promise<string> {
    const r = await this.client.models.list({ signal })
    return pingAnswer(
      this.model,
      r.data.map((m) => m.id),
    )
  }
}
