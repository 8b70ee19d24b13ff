// A provider double: a loopback Hono server speaking the streaming wire of OpenAI Chat
// Completions, OpenAI Responses and Anthropic Messages byte for byte, driven by scripted replies.
// The SDKs under test talk to it exactly as they talk to the hosted APIs.
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createAdaptorServer } from '@hono/node-server'
import { Hono } from 'hono'

export type ScriptedCall = { args: string; name?: string; id?: string }
export type Fault =
  | { kind: 'stall-before-first-byte' }
  | { kind: 'cut-mid-stream' }
  // Half the reply streams, then nothing more (the connection stays open) until the client gives up.
  | { kind: 'stall-mid-stream' }
  | {
      kind: 'status'
      status: number
      retryAfter?: string
      message?: string
      param?: string
      // The error's type (OpenAI: also its code), e.g. insufficient_quota on a 429.
      type?: string
      // The `x-should-retry` header both APIs send to tell clients whether to retry.
      shouldRetry?: 'true' | 'false'
    }
  // The server reports an error inside a 200 stream half-way (Anthropic's `event: error`, e.g.
  // overloaded_error; Responses' `error` event; Chat's `data: {"error": ...}`), then closes it.
  | { kind: 'stream-error'; type: string; message: string }

export type Scripted = {
  // Responses only: a reasoning item before the rest of the output, with a summary; its
  // encrypted_content is sent only when the request asked for it (include), as the API does.
  reasoning?: { summary: string; encrypted: string }
  // Anthropic only: thinking blocks (text + signature) or redacted ones, before the rest of the
  // content; streamed only when the request turned thinking on, as the API does.
  thinking?: ({ thinking: string; signature: string } | { redacted: string })[]
  // A model that thinks by default (adaptive, always on): its thinking streams whatever the
  // request says.
  alwaysThinks?: boolean
  text?: string
  calls?: ScriptedCall[]
  usage?: { input?: number; output?: number; cached?: number; reasoning?: number }
  // The reply ran into the output token limit: what is scripted (a call's args cut where the
  // test cut them) ends as the API ends such a reply: Chat `finish_reason: "length"`, Anthropic
  // `stop_reason: "max_tokens"`, Responses `response.incomplete` (reason max_output_tokens) with
  // the cut items left in progress.
  maxTokens?: boolean
  // Chat only: tool-call fragments as some OpenAI-compatible servers send them (no `index`, the
  // id and name repeated in every fragment).
  compatQuirks?: boolean
  // The model declines: Chat streams its words as `delta.refusal` (content stays empty),
  // Responses as a message whose content part is a `refusal`.
  refusal?: string
  // Characters of text per streamed delta (5 unless set): a server that sends a long reply in
  // a few big deltas, so a test of what the host does with the whole text is not a test of the
  // SDK's per-event cost.
  textPiece?: number
  fault?: Fault
}
export type Dialect = 'chat' | 'anthropic' | 'responses'
export type Recorded = {
  dialect: Dialect
  path: string
  headers: Record<string, string>
  body: any
  at: number
  // Refused for its size (the double's context window), before any scripted reply was taken.
  refused?: true
}

// How a server words a request over its context window: OpenAI's Chat and Responses APIs
// (`context_length_exceeded`), Anthropic's "prompt is too long", and two OpenAI-compatible
// servers (vLLM's maximum-context message, llama.cpp's exceed_context_size_error).
export type OverflowStyle = 'openai' | 'vllm' | 'llamacpp'
export type Responder = Scripted | ((req: Recorded, n: number) => Scripted)

const enc = new TextEncoder()
// Small fragments, so every argument string crosses several deltas.
export const FRAGMENT = 7
const pieces = (s: string, n = FRAGMENT): string[] => {
  const out: string[] = []
  for (let i = 0; i < s.length; i += n) out.push(s.slice(i, i + n))
  return out
}
const data = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`
const named = (event: string, o: unknown) => `event: ${event}\ndata: ${JSON.stringify(o)}\n\n`

function chatFrames(r: Scripted, n: number, model: string, req?: Recorded): string[] {
  const id = `chatcmpl-double${n}`
  const base = {
    id,
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model,
    system_fingerprint: 'fp_double',
  }
  // With stream_options.include_usage every chunk carries `usage: null` but the last.
  const usageNull = req?.body?.stream_options?.include_usage ? { usage: null } : {}
  const chunk = (delta: unknown, finish: string | null = null) =>
    data({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...usageNull })
  const frames = [chunk({ role: 'assistant', content: '', refusal: null })]
  for (const t of pieces(r.text ?? '', r.textPiece ?? 5)) frames.push(chunk({ content: t }))
  for (const t of pieces(r.refusal ?? '', 5)) frames.push(chunk({ refusal: t }))
  ;(r.calls ?? []).forEach((c, i) => {
    frames.push(
      chunk({
        tool_calls: [
          {
            ...(r.compatQuirks ? {} : { index: i }),
            id: c.id ?? `call_${n}_${i}`,
            type: 'function',
            function: { name: c.name ?? 'python_execution', arguments: '' },
          },
        ],
      }),
    )
    for (const a of pieces(c.args)) {
      // OpenAI's own: the index and the new fragment only. Some compatible servers repeat the
      // id and name with every fragment and leave the index out (`compatQuirks`).
      const q = r.compatQuirks
        ? {
            id: c.id ?? `call_${n}_${i}`,
            type: 'function',
            function: { name: c.name ?? 'python_execution', arguments: a },
          }
        : { index: i, function: { arguments: a } }
      frames.push(chunk({ tool_calls: [q] }))
    }
  })
  frames.push(chunk({}, r.maxTokens ? 'length' : r.calls?.length ? 'tool_calls' : 'stop'))
  const u = r.usage ?? {}
  frames.push(
    data({
      ...base,
      choices: [],
      usage: {
        prompt_tokens: u.input ?? 100,
        completion_tokens: u.output ?? 20,
        total_tokens: (u.input ?? 100) + (u.output ?? 20),
        prompt_tokens_details: { cached_tokens: u.cached ?? 0, audio_tokens: 0 },
        completion_tokens_details: {
          reasoning_tokens: u.reasoning ?? 0,
          audio_tokens: 0,
          accepted_prediction_tokens: 0,
          rejected_prediction_tokens: 0,
        },
      },
    }),
  )
  frames.push('data: [DONE]\n\n')
  return frames
}

function anthropicFrames(r: Scripted, n: number, model: string, req?: Recorded): string[] {
  const u = r.usage ?? {}
  const frames = [
    named('message_start', {
      type: 'message_start',
      message: {
        id: `msg_double${n}`,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: (u.input ?? 100) - (u.cached ?? 0),
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: u.cached ?? 0,
          output_tokens: 1,
        },
      },
    }),
  ]
  let index = 0
  const thinkingOn = r.alwaysThinks || ['enabled', 'adaptive'].includes(req?.body?.thinking?.type)
  for (const t of thinkingOn ? (r.thinking ?? []) : []) {
    const start = (content_block: unknown) =>
      named('content_block_start', { type: 'content_block_start', index, content_block })
    const delta = (d: unknown) =>
      named('content_block_delta', { type: 'content_block_delta', index, delta: d })
    if ('redacted' in t) frames.push(start({ type: 'redacted_thinking', data: t.redacted }))
    else {
      // As the API streams it: an empty thinking block, its text in deltas, then the signature
      // in one signature_delta just before the block stops.
      frames.push(start({ type: 'thinking', thinking: '', signature: '' }))
      for (const p of pieces(t.thinking, 5)) frames.push(delta({ type: 'thinking_delta', thinking: p }))
      frames.push(delta({ type: 'signature_delta', signature: t.signature }))
    }
    frames.push(named('content_block_stop', { type: 'content_block_stop', index }))
    index++
  }
  if (r.text) {
    frames.push(
      named('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'text', text: '' },
      }),
    )
    frames.push(named('ping', { type: 'ping' }))
    for (const t of pieces(r.text, r.textPiece ?? 5)) {
      frames.push(
        named('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'text_delta', text: t },
        }),
      )
    }
    frames.push(named('content_block_stop', { type: 'content_block_stop', index }))
    index++
  }
  for (const c of r.calls ?? []) {
    frames.push(
      named('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: {
          type: 'tool_use',
          id: c.id ?? `toolu_double${n}_${index}`,
          name: c.name ?? 'python_execution',
          input: {},
        },
      }),
    )
    for (const a of pieces(c.args)) {
      frames.push(
        named('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: a },
        }),
      )
    }
    frames.push(named('content_block_stop', { type: 'content_block_stop', index }))
    index++
  }
  frames.push(
    named('message_delta', {
      type: 'message_delta',
      delta: {
        stop_reason: r.maxTokens ? 'max_tokens' : r.calls?.length ? 'tool_use' : 'end_turn',
        stop_sequence: null,
      },
      // Whole-message totals (input counters repeated), thinking tokens among the output.
      usage: {
        input_tokens: (u.input ?? 100) - (u.cached ?? 0),
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: u.cached ?? 0,
        output_tokens: u.output ?? 20,
        ...(u.reasoning ? { output_tokens_details: { thinking_tokens: u.reasoning } } : {}),
      },
    }),
  )
  frames.push(named('message_stop', { type: 'message_stop' }))
  return frames
}

function responsesFrames(r: Scripted, n: number, model: string, req?: Recorded): string[] {
  const u = r.usage ?? {}
  let seq = 0
  const ev = (type: string, o: Record<string, unknown>) => named(type, { type, sequence_number: seq++, ...o })
  const resp = (status: string, output: unknown[], usage: unknown, incomplete: unknown = null) => ({
    id: `resp_double${n}`,
    object: 'response',
    created_at: 1_700_000_000,
    status,
    model,
    output,
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    usage,
    error: null,
    incomplete_details: incomplete,
  })
  const frames = [
    ev('response.created', { response: resp('in_progress', [], null) }),
    ev('response.in_progress', { response: resp('in_progress', [], null) }),
  ]
  const output: Record<string, unknown>[] = []
  if (r.reasoning) {
    const oi = output.length
    const item_id = `rs_double${n}`
    const text = r.reasoning.summary
    frames.push(
      ev('response.output_item.added', {
        output_index: oi,
        item: { id: item_id, type: 'reasoning', summary: [] },
      }),
    )
    const at = { item_id, output_index: oi, summary_index: 0 }
    frames.push(
      ev('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } }),
    )
    for (const t of pieces(text, 5))
      frames.push(ev('response.reasoning_summary_text.delta', { ...at, delta: t }))
    frames.push(ev('response.reasoning_summary_text.done', { ...at, text }))
    const part = { type: 'summary_text', text }
    frames.push(ev('response.reasoning_summary_part.done', { ...at, part }))
    const encrypted = (req?.body?.include ?? []).includes('reasoning.encrypted_content')
    const item = {
      id: item_id,
      type: 'reasoning',
      ...(encrypted ? { encrypted_content: r.reasoning.encrypted } : {}),
      summary: [part],
    }
    frames.push(ev('response.output_item.done', { output_index: oi, item }))
    output.push(item)
  }
  if (r.text) {
    const oi = output.length
    const item_id = `msg_double${n}`
    frames.push(
      ev('response.output_item.added', {
        output_index: oi,
        item: { id: item_id, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
      }),
    )
    frames.push(
      ev('response.content_part.added', {
        item_id,
        output_index: oi,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      }),
    )
    for (const t of pieces(r.text, r.textPiece ?? 5))
      frames.push(
        ev('response.output_text.delta', {
          item_id,
          output_index: oi,
          content_index: 0,
          delta: t,
          logprobs: [],
        }),
      )
    frames.push(
      ev('response.output_text.done', {
        item_id,
        output_index: oi,
        content_index: 0,
        text: r.text,
        logprobs: [],
      }),
    )
    const part = { type: 'output_text', text: r.text, annotations: [] }
    frames.push(ev('response.content_part.done', { item_id, output_index: oi, content_index: 0, part }))
    const item = { id: item_id, type: 'message', status: 'completed', role: 'assistant', content: [part] }
    frames.push(ev('response.output_item.done', { output_index: oi, item }))
    output.push(item)
  }
  if (r.refusal) {
    // A message whose one content part is a refusal, streamed as response.refusal.delta.
    const oi = output.length
    const item_id = `msg_refusal${n}`
    const at = { item_id, output_index: oi, content_index: 0 }
    const message = (status: string, content: unknown[]) => ({
      id: item_id,
      type: 'message',
      status,
      role: 'assistant',
      content,
    })
    frames.push(ev('response.output_item.added', { output_index: oi, item: message('in_progress', []) }))
    frames.push(ev('response.content_part.added', { ...at, part: { type: 'refusal', refusal: '' } }))
    for (const t of pieces(r.refusal, 5)) frames.push(ev('response.refusal.delta', { ...at, delta: t }))
    frames.push(ev('response.refusal.done', { ...at, refusal: r.refusal }))
    const part = { type: 'refusal', refusal: r.refusal }
    frames.push(ev('response.content_part.done', { ...at, part }))
    const item = message('completed', [part])
    frames.push(ev('response.output_item.done', { output_index: oi, item }))
    output.push(item)
  }
  for (const [i, c] of (r.calls ?? []).entries()) {
    const oi = output.length
    const item_id = `fc_double${n}_${i}`
    const call_id = c.id ?? `call_double${n}_${i}`
    const name = c.name ?? 'python_execution'
    frames.push(
      ev('response.output_item.added', {
        output_index: oi,
        item: { id: item_id, type: 'function_call', status: 'in_progress', call_id, name, arguments: '' },
      }),
    )
    for (const a of pieces(c.args))
      frames.push(ev('response.function_call_arguments.delta', { item_id, output_index: oi, delta: a }))
    // Cut by the token limit: the item never completes; the response ends incomplete.
    const cut = r.maxTokens && i === (r.calls ?? []).length - 1
    const status = cut ? 'incomplete' : 'completed'
    const item = { id: item_id, type: 'function_call', status, call_id, name, arguments: c.args }
    if (!cut) {
      frames.push(
        ev('response.function_call_arguments.done', { item_id, output_index: oi, arguments: c.args }),
      )
      frames.push(ev('response.output_item.done', { output_index: oi, item }))
    }
    output.push(item)
  }
  const usage = {
    input_tokens: u.input ?? 100,
    input_tokens_details: { cached_tokens: u.cached ?? 0 },
    output_tokens: u.output ?? 20,
    output_tokens_details: { reasoning_tokens: u.reasoning ?? 0 },
    total_tokens: (u.input ?? 100) + (u.output ?? 20),
  }
  if (r.maxTokens) {
    const why = { reason: 'max_output_tokens' }
    frames.push(ev('response.incomplete', { response: resp('incomplete', output, usage, why) }))
  } else frames.push(ev('response.completed', { response: resp('completed', output, usage) }))
  return frames
}

// The non-streaming Chat Completions answer: the same reply as chatFrames, in one object.
function chatCompletion(r: Scripted, n: number, model: string): unknown {
  const u = r.usage ?? {}
  const calls = (r.calls ?? []).map((c, i) => ({
    id: c.id ?? `call_${n}_${i}`,
    type: 'function',
    function: { name: c.name ?? 'python_execution', arguments: c.args },
  }))
  return {
    id: `chatcmpl-double${n}`,
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    system_fingerprint: 'fp_double',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: r.text ?? null,
          refusal: r.refusal ?? null,
          ...(calls.length ? { tool_calls: calls } : {}),
        },
        logprobs: null,
        finish_reason: r.maxTokens ? 'length' : calls.length ? 'tool_calls' : 'stop',
      },
    ],
    usage: {
      prompt_tokens: u.input ?? 100,
      completion_tokens: u.output ?? 20,
      total_tokens: (u.input ?? 100) + (u.output ?? 20),
      prompt_tokens_details: { cached_tokens: u.cached ?? 0, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: u.reasoning ?? 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    },
  }
}

// An error reported inside a stream, as each API words it.
function streamError(dialect: Dialect, f: { type: string; message: string }, seq: number): string {
  if (dialect === 'anthropic')
    return named('error', { type: 'error', error: { type: f.type, message: f.message } })
  if (dialect === 'responses')
    return named('error', {
      type: 'error',
      code: f.type,
      message: f.message,
      param: null,
      sequence_number: seq,
    })
  return data({ error: { message: f.message, type: f.type, param: null, code: null } })
}

const FRAMES: Record<Dialect, (r: Scripted, n: number, model: string, req?: Recorded) => string[]> = {
  chat: chatFrames,
  anthropic: anthropicFrames,
  responses: responsesFrames,
}

export class ProviderDouble {
  readonly requests: Recorded[] = []
  private queue: Responder[] = []
  private fallback: Responder | undefined
  private server!: Server
  private readonly stalls = new Set<() => void>()
  port = 0
  // A request whose body is longer than this (bytes) is refused as a hosted API refuses a prompt
  // over its window; about 4 bytes a token in the message. Unset: no limit.
  contextBytes: number | undefined
  overflowStyle: OverflowStyle = 'openai'

  // The OpenAI SDKs take the /v1 base; the Anthropic SDK adds /v1 itself.
  get openaiURL(): string {
    return `http://127.0.0.1:${this.port}/v1`
  }
  get anthropicURL(): string {
    return `http://127.0.0.1:${this.port}`
  }

  // Replies for the next requests, in order; `always` answers every request after them.
  script(replies: Responder[], always?: Responder): this {
    this.queue.push(...replies)
    this.fallback = always
    return this
  }

  get remaining(): number {
    return this.queue.length
  }

  async start(): Promise<this> {
    const app = new Hono()
    const handle = (dialect: Dialect) => async (c: import('hono').Context) => {
      const body = await c.req.json()
      const rec: Recorded = {
        dialect,
        path: c.req.path,
        headers: Object.fromEntries(c.req.raw.headers),
        body,
        at: performance.now(),
      }
      this.requests.push(rec)
      const size = Buffer.byteLength(JSON.stringify(body))
      if (this.contextBytes !== undefined && size > this.contextBytes) {
        rec.refused = true
        return overflow(dialect, this.overflowStyle, Math.ceil(size / 4), Math.floor(this.contextBytes / 4))
      }
      const next = this.queue.shift() ?? this.fallback
      if (!next)
        return c.json({ error: { message: 'the double has no scripted reply left', type: 'double' } }, 500)
      const reply = typeof next === 'function' ? next(rec, this.requests.length) : next
      return this.respond(dialect, reply, body.model, c.req.raw.signal, rec)
    }
    app.post('/v1/chat/completions', handle('chat'))
    app.post('/v1/messages', handle('anthropic'))
    app.post('/v1/responses', handle('responses'))
    app.get('/v1/models', (c) =>
      c.json({
        object: 'list',
        data: [{ id: 'double-model', object: 'model', created: 1_700_000_000, owned_by: 'double' }],
        has_more: false,
      }),
    )
    this.server = createAdaptorServer({ fetch: app.fetch, hostname: '127.0.0.1' }) as Server
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.port = (this.server.address() as AddressInfo).port
    return this
  }

  private respond(
    dialect: Dialect,
    r: Scripted,
    model: string,
    signal: AbortSignal,
    req: Recorded,
  ): Response | Promise<Response> {
    const f = r.fault
    if (f?.kind === 'status') {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'x-request-id': 'req_fault',
      }
      if (f.retryAfter !== undefined) headers['retry-after'] = f.retryAfter
      if (f.shouldRetry !== undefined) headers['x-should-retry'] = f.shouldRetry
      const body =
        dialect === 'anthropic'
          ? {
              type: 'error',
              error: {
                type:
                  f.type ??
                  (f.status === 429
                    ? 'rate_limit_error'
                    : f.status === 529
                      ? 'overloaded_error'
                      : 'api_error'),
                message: f.message ?? 'scripted',
              },
            }
          : {
              error: {
                message: f.message ?? 'scripted',
                type:
                  f.type ??
                  (f.status === 429
                    ? 'rate_limit_exceeded'
                    : f.status === 400
                      ? 'invalid_request_error'
                      : 'server_error'),
                param: f.param ?? null,
                code: f.type ?? null,
              },
            }
      return new Response(JSON.stringify(body), { status: f.status, headers })
    }
    if (f?.kind === 'stall-before-first-byte') {
      // No status line, no byte: held until the client gives up.
      return new Promise<Response>((resolve) => {
        const end = () => resolve(new Response('', { status: 499 }))
        this.stalls.add(end)
        signal.addEventListener('abort', end, { once: true })
      })
    }
    // A Chat request without `stream: true` gets the whole completion as one JSON body, as the
    // API answers it (LangChain's ChatOpenAI asks so unless told to stream).
    if (dialect === 'chat' && req.body?.stream !== true) {
      return Response.json(chatCompletion(r, this.requests.length, model), {
        headers: { 'x-request-id': `req_double${this.requests.length}` },
      })
    }
    const frames = FRAMES[dialect](r, this.requests.length, model, req)
    const cut =
      f?.kind === 'cut-mid-stream' || f?.kind === 'stream-error' || f?.kind === 'stall-mid-stream'
        ? Math.max(1, Math.floor(frames.length / 2))
        : -1
    if (f?.kind === 'stream-error') {
      frames.splice(cut, frames.length - cut, streamError(dialect, f, cut))
    }
    let i = 0
    const stalls = this.stalls
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (i === cut && f?.kind === 'cut-mid-stream') {
          controller.error(new Error('scripted cut'))
          return
        }
        if (i === cut && f?.kind === 'stall-mid-stream') {
          // Silent from here; the stream ends when the client aborts (or the double closes).
          return new Promise<void>((resolve) => {
            const end = () => {
              controller.error(new Error('client gone'))
              resolve()
            }
            stalls.add(end)
            signal.addEventListener('abort', end, { once: true })
          })
        }
        if (i >= frames.length) {
          controller.close()
          return
        }
        controller.enqueue(enc.encode(frames[i++]))
      },
    })
    const headers: Record<string, string> = {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      [dialect === 'anthropic' ? 'request-id' : 'x-request-id']: `req_double${this.requests.length}`,
    }
    return new Response(stream, { status: 200, headers })
  }

  async close(): Promise<void> {
    for (const end of this.stalls) end()
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}

function overflow(dialect: Dialect, style: OverflowStyle, tokens: number, max: number): Response {
  const json = (body: unknown) =>
    new Response(JSON.stringify(body), {
      status: 400,
      headers: { 'content-type': 'application/json', 'x-request-id': 'req_overflow' },
    })
  if (dialect === 'anthropic')
    return json({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: `prompt is too long: ${tokens} tokens > ${max} maximum`,
      },
    })
  if (dialect === 'responses')
    return json({
      error: {
        message:
          'Your input exceeds the context window of this model. Please adjust your input and try again.',
        type: 'invalid_request_error',
        param: 'input',
        code: 'context_length_exceeded',
      },
    })
  if (style === 'llamacpp')
    return json({
      error: {
        code: 400,
        message: 'the request exceeds the available context size, try increasing it',
        type: 'exceed_context_size_error',
        n_prompt_tokens: tokens,
        n_ctx: max,
      },
    })
  if (style === 'vllm')
    return json({
      error: {
        message: `This model's maximum context length is ${max} tokens. However, you requested ${tokens} tokens in the messages, Please reduce the length of the messages.`,
        type: 'BadRequestError',
        param: null,
        code: 400,
      },
    })
  return json({
    error: {
      message: `This model's maximum context length is ${max} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    },
  })
}

export const pyCall = (code: string, id?: string): ScriptedCall => ({
  args: JSON.stringify({ code }),
  ...(id ? { id } : {}),
})
