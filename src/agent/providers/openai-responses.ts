import OpenAI from 'openai'
import { streamFailure } from './failure.js'
import { breather } from './reply.js'
import type { CompleteRequest, Message, ModelReply, Part, Provider, ReasoningItem } from './types.js'
import { PYTHON_TOOL, pingAnswer, ResponsesReasoningSchema, sdkOptions, zeroUsage } from './types.js'

type Item = Record<string, unknown>

const inputPart = (p: Part): Item =>
  p.type === 'text'
    ? { type: 'input_text', text: p.text }
    : { type: 'input_image', image_url: `data:${p.mediaType};base64,${p.data}`, detail: 'auto' }

const textOf = (parts: Part[]) =>
  parts
    .filter((p): p is Extract<Part, { type: 'text' }> => p.type === 'text')
    .map((p) => p.text)
    .join('\n')

// Stateless input items (no previous_response_id): the whole history is sent each time, so it
// only grows and the provider's prompt cache keeps matching.
export function responsesInput(messages: readonly Message[]): Item[] {
  const out: Item[] = []
  for (const m of messages) {
    if (m.role === 'user') out.push({ role: 'user', content: m.content.map(inputPart) })
    else if (m.role === 'assistant') {
      // Reasoning first, as the reply had it: each item precedes the output it led to. Another
      // dialect's (a turn run with an Anthropic model) means nothing here.
      for (const r of m.reasoning ?? []) if (r.type === 'reasoning') out.push(r)
      if (m.text !== '') out.push({ role: 'assistant', content: m.text })
      for (const c of m.toolCalls)
        out.push({ type: 'function_call', call_id: c.id, name: c.name, arguments: c.arguments })
    } else {
      out.push({ type: 'function_call_output', call_id: m.callId, output: textOf(m.content) })
      const images = m.content.filter((p) => p.type === 'image')
      if (images.length > 0) out.push({ role: 'user', content: images.map(inputPart) })
    }
  }
  return out
}

// Stateless requests (`store: false`) ask for each reasoning item's encrypted_content: without
// it a reasoning item cannot be sent back (the server keeps nothing to look its id up by). A
// model without reasoning refuses that with a 400 naming the `include` parameter ("Encrypted
// content is not supported with this model."): the request is sent again without it, and
// that endpoint and model are asked without it from then on (for this process).
const NO_ENCRYPTED = new Set<string>()

function refusesEncrypted(err: unknown): boolean {
  return err instanceof OpenAI.APIError && err.status === 400 && err.param === 'include'
}

export type ResponsesOptions = { model: string; baseURL?: string; apiKey?: string }

// OpenAI Responses API, streamed: text deltas as they come, the final output items from
// response.completed.
export class OpenAIResponsesProvider implements Provider {
  readonly name = 'openai-responses'
  readonly model: string
  readonly images = true
  private readonly client: OpenAI

  private readonly baseURL: string

  constructor(opts: ResponsesOptions) {
    this.model = opts.model
    this.client = new OpenAI(sdkOptions(opts))
    this.baseURL = this.client.baseURL
  }

  async complete(req: CompleteRequest): Promise<ModelReply> {
    const key = `${this.baseURL}|${this.model}`
    const encrypted = !NO_ENCRYPTED.has(key)
    try {
      return await this.stream(req, encrypted)
    } catch (err) {
      if (!encrypted || !refusesEncrypted(err)) throw err
      NO_ENCRYPTED.add(key)
      return this.stream(req, false)
    }
  }

  private async stream(req: CompleteRequest, encrypted: boolean): Promise<ModelReply> {
    const params = {
      model: this.model,
      instructions: req.system,
      input: responsesInput(req.messages),
      stream: true,
      store: false,
      ...(encrypted ? { include: ['reasoning.encrypted_content'] } : {}),
      ...(req.tools
        ? {
            tools: [
              {
                type: 'function',
                name: PYTHON_TOOL.name,
                description: PYTHON_TOOL.description,
                parameters: PYTHON_TOOL.parameters,
                strict: false,
              },
            ],
            tool_choice: req.toolChoice,
          }
        : {}),
    } as unknown as OpenAI.Responses.ResponseCreateParamsStreaming
    const { data: stream, request_id } = await this.client.responses
      .create(params, { signal: req.signal })
      .withResponse()
    let text = ''
    let final: OpenAI.Responses.Response | undefined
    const breathe = breather()
    for await (const ev of stream) {
      await breathe()
      req.onDelta('')
      if (ev.type === 'response.output_text.delta') {
        text += ev.delta
        req.onDelta(ev.delta)
      } else if (ev.type === 'response.completed' || ev.type === 'response.incomplete') {
        final = ev.response
      } else if (ev.type === 'response.failed') {
        const e = ev.response.error
        throw streamFailure(
          this.name,
          e?.code ?? 'failed',
          e?.message ?? 'the response failed, no reason given',
        )
      } else if (ev.type === 'error') {
        // The server's own words; without this the stream just ends and the reason is lost.
        throw streamFailure(this.name, ev.code ?? 'error', ev.message)
      }
    }
    if (!final) throw new Error('the stream ended before response.completed')
    const usage = zeroUsage()
    usage.input = final.usage?.input_tokens ?? 0
    usage.output = final.usage?.output_tokens ?? 0
    usage.cached = final.usage?.input_tokens_details?.cached_tokens ?? 0
    usage.reasoning = final.usage?.output_tokens_details?.reasoning_tokens ?? 0
    const toolCalls = final.output.flatMap((o) =>
      o.type === 'function_call' ? [{ id: o.call_id, name: o.name, arguments: o.arguments }] : [],
    )
    const completedText = final.output
      .flatMap((o) => (o.type === 'message' ? o.content : []))
      // A refusal is the model's answer too.
      .map((c) => (c.type === 'output_text' ? c.text : c.type === 'refusal' ? c.refusal : ''))
      .join('')
    // Kept as they came (not re-serialised through the schema): sent back verbatim.
    const reasoning = (final.output as unknown[]).filter(
      (o): o is ReasoningItem => ResponsesReasoningSchema.safeParse(o).success,
    )
    return {
      text: completedText || text,
      toolCalls,
      usage,
      requestId: request_id ?? final.id,
      // An incomplete response says why (max_output_tokens, content_filter): that is its stop.
      stop:
        final.status === 'incomplete'
          ? (final.incomplete_details?.reason ?? 'incomplete')
          : (final.status ?? null),
      ...(reasoning.length > 0 ? { reasoning } : {}),
    }
  }

  async ping(signal: AbortSignal): Promise<string> {
    const r = await this.client.models.list({ signal })
    return pingAnswer(
      this.model,
      r.data.map((m) => m.id),
    )
  }
}
