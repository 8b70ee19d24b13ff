import Anthropic from '@anthropic-ai/sdk'
import { breather, ReplyBuilder } from './reply.js'
import type { CompleteRequest, Message, ModelReply, Part, Provider, ReasoningItem } from './types.js'
import {
  ANTHROPIC_MAX_TOKENS,
  AnthropicThinkingSchema,
  PYTHON_TOOL,
  pingAnswer,
  sdkOptions,
} from './types.js'

type Block = Record<string, unknown>
type Turn = { role: 'user' | 'assistant'; content: Block[] }

const partBlock = (p: Part): Block =>
  p.type === 'text'
    ? { type: 'text', text: p.text }
    : { type: 'image', source: { type: 'base64', media_type: p.mediaType, data: p.data } }

// Messages alternate user/assistant; tool results are user content. Adjacent messages of one
// role (a tool result, then the next prompt) merge into one.
export function anthropicMessages(messages: readonly Message[]): Turn[] {
  const out: Turn[] = []
  const push = (role: Turn['role'], blocks: Block[]) => {
    const last = out.at(-1)
    if (last && last.role === role) last.content.push(...blocks)
    else out.push({ role, content: blocks })
  }
  for (const m of messages) {
    if (m.role === 'user') push('user', m.content.map(partBlock))
    else if (m.role === 'tool') {
      push('user', [{ type: 'tool_result', tool_use_id: m.callId, content: m.content.map(partBlock) }])
    } else {
      // Thinking first, verbatim and in order (a copy: the cache breakpoint must not land on the
      // stored block): with thinking on, the API refuses tool results whose assistant message
      // lost the thinking that led to the call. Another dialect's reasoning means nothing here.
      const blocks: Block[] = (m.reasoning ?? []).filter(isThinking).map((r) => ({ ...r }))
      if (m.text !== '') blocks.push({ type: 'text', text: m.text })
      for (const c of m.toolCalls) {
        let input: unknown = {}
        try {
          input = JSON.parse(c.arguments)
        } catch {
          // A malformed call was answered with an error; its input is kept as text so the
          // conversation stays valid.
          input = { code: c.arguments }
        }
        blocks.push({ type: 'tool_use', id: c.id, name: c.name, input })
      }
      if (!blocks.some((b) => b.type === 'text' || b.type === 'tool_use'))
        blocks.push({ type: 'text', text: '(empty reply)' })
      push('assistant', blocks)
    }
  }
  return out
}

// Thinking blocks stream whenever the model thinks, also without this parameter (models whose
// thinking is on by default): the blocks go back either way.
const thinkingParam = (t: NonNullable<AnthropicOptions['thinking']>) =>
  t.type === 'adaptive' ? { type: 'adaptive' } : { type: 'enabled', budget_tokens: t.budget_tokens }

const isThinking = (r: ReasoningItem) => r.type === 'thinking' || r.type === 'redacted_thinking'

function withCacheBreakpoint(turns: Turn[]): Turn[] {
  const last = turns.at(-1)?.content.at(-1)
  if (last) last.cache_control = { type: 'ephemeral' }
  return turns
}

type UsageCounts = {
  input_tokens?: number | null
  cache_read_input_tokens?: number | null
  cache_creation_input_tokens?: number | null
  output_tokens?: number | null
  output_tokens_details?: { thinking_tokens?: number | null } | null
}

// Usage as the stream reports it: message_start has the first counts, message_delta whole-message
// totals, each counter present only when it applies (overwrite when present, never add; as the
// SDK's own accumulator does). Input is fresh + cache reads + cache writes, so `cached` is a part
// of it as with the OpenAI dialects; thinking tokens are the reply's reasoning (part of output).
class UsageTally {
  private fresh = 0
  private read = 0
  private written = 0
  constructor(private readonly usage: ModelReply['usage']) {}

  take(u: UsageCounts): void {
    if (u.input_tokens != null) this.fresh = u.input_tokens
    if (u.cache_read_input_tokens != null) this.read = u.cache_read_input_tokens
    if (u.cache_creation_input_tokens != null) this.written = u.cache_creation_input_tokens
    if (u.output_tokens != null) this.usage.output = u.output_tokens
    const thinking = u.output_tokens_details?.thinking_tokens
    if (thinking != null) this.usage.reasoning = thinking
    this.usage.cached = this.read
    this.usage.input = this.fresh + this.read + this.written
  }
}

export type AnthropicOptions = {
  model: string
  baseURL?: string
  apiKey?: string
  maxTokens?: number
  // Extended thinking on: with a budget (validated in config.ts: ≥ 1024, < maxTokens), or adaptive.
  thinking?: { type: 'enabled' | 'adaptive'; budget_tokens?: number | undefined }
}

// Anthropic Messages, streamed; tool input JSON arrives as partial_json fragments per block index.
export class AnthropicProvider implements Provider {
  readonly name = 'anthropic'
  readonly model: string
  readonly images = true
  private readonly client: Anthropic
  private readonly maxTokens: number
  private readonly thinking: AnthropicOptions['thinking']

  constructor(opts: AnthropicOptions) {
    this.model = opts.model
    this.maxTokens = opts.maxTokens ?? ANTHROPIC_MAX_TOKENS
    this.thinking = opts.thinking
    this.client = new Anthropic(sdkOptions(opts))
  }

  async complete(req: CompleteRequest): Promise<ModelReply> {
    const params = {
      model: this.model,
      max_tokens: this.maxTokens,
      // Cache breakpoints on the system prompt and the newest message: the history only grows, so
      // each request reads the previous one's prefix from the cache.
      system: [{ type: 'text', text: req.system, cache_control: { type: 'ephemeral' } }],
      messages: withCacheBreakpoint(anthropicMessages(req.messages)),
      stream: true,
      ...(this.thinking ? { thinking: thinkingParam(this.thinking) } : {}),
      ...(req.tools
        ? {
            tools: [
              {
                name: PYTHON_TOOL.name,
                description: PYTHON_TOOL.description,
                input_schema: PYTHON_TOOL.parameters,
              },
            ],
            tool_choice: { type: req.toolChoice },
          }
        : {}),
    } as unknown as Anthropic.MessageCreateParamsStreaming
    const { data: stream, request_id } = await this.client.messages
      .create(params, { signal: req.signal })
      .withResponse()
    const reply = new ReplyBuilder(req.onDelta)
    const tally = new UsageTally(reply.usage)
    // Thinking blocks by stream index, assembled from their deltas.
    const thinking = new Map<number, Block>()
    const breathe = breather()
    for await (const ev of stream) {
      await breathe()
      req.onDelta('')
      switch (ev.type) {
        case 'message_start':
          reply.id = ev.message.id
          tally.take(ev.message.usage)
          break
        case 'content_block_start':
          if (ev.content_block.type === 'tool_use') {
            reply.addCall(ev.index, { id: ev.content_block.id, name: ev.content_block.name })
          } else if (ev.content_block.type === 'thinking' || ev.content_block.type === 'redacted_thinking') {
            // A redacted block comes whole here; a thinking block's text and signature follow.
            thinking.set(ev.index, { ...ev.content_block })
          }
          break
        case 'content_block_delta':
          if (ev.delta.type === 'text_delta') reply.addText(ev.delta.text)
          else if (ev.delta.type === 'thinking_delta' || ev.delta.type === 'signature_delta') {
            const b = thinking.get(ev.index)
            if (b && ev.delta.type === 'thinking_delta')
              b.thinking = `${b.thinking ?? ''}${ev.delta.thinking}`
            else if (b && ev.delta.type === 'signature_delta')
              b.signature = `${b.signature ?? ''}${ev.delta.signature}`
          } else if (ev.delta.type === 'input_json_delta' && reply.hasCall(ev.index)) {
            reply.addCall(ev.index, { arguments: ev.delta.partial_json })
          }
          break
        case 'message_delta':
          reply.stop = ev.delta.stop_reason ?? reply.stop
          if (ev.usage) tally.take(ev.usage)
          break
        default:
          break
      }
    }
    // A tool_use with no input fragments has the empty object as input.
    const done = reply.finish(request_id)
    // Only whole blocks can go back: a thinking block whose signature never came (a cut stream
    // ends in an error before this) would be refused.
    const reasoning = [...thinking.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([, b]) => b)
      .filter((b): b is ReasoningItem => AnthropicThinkingSchema.safeParse(b).success)
    return reasoning.length > 0 ? { ...done, reasoning } : done
  }

  async ping(signal: AbortSignal): Promise<string> {
    const r = await this.client.models.list({}, { signal })
    return pingAnswer(
      this.model,
      r.data.map((m) => m.id),
    )
  }
}
