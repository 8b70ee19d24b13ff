import { type ErrorCode, errorMessage, VisError } from '../../util/errors.js'

// Why a model request failed, in the terms the loop decides on: retry (after how long) or not.
export class ProviderFailure extends VisError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly retryable: boolean,
    readonly status: number | undefined,
    readonly retryAfterMs: number | undefined,
    context: Record<string, unknown> = {},
  ) {
    super(code, message, context)
  }
}

// `retry-after` is seconds or an HTTP date; `retry-after-ms` (OpenAI's) wins when present.
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined
  const ms = Number(headers.get('retry-after-ms'))
  if (headers.get('retry-after-ms') !== null && Number.isFinite(ms) && ms >= 0) return ms
  const raw = headers.get('retry-after')
  if (raw === null) return undefined
  const secs = Number(raw)
  if (Number.isFinite(secs) && secs >= 0) return secs * 1000
  const at = Date.parse(raw)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

// An error the server reported inside a stream it had begun with 200 (Anthropic's `error` event,
// overloaded_error most often; Responses' `error` event or response.failed; a Chat chunk holding
// `error`): the server is there and said why, so it is not "unreachable". Retried like a 5xx: the
// request was valid, the server failed it half-way.
export function streamFailure(provider: string, type: string, message: string): ProviderFailure {
  return new ProviderFailure(
    'agent.model-stream-error',
    `${provider} reported an error in the stream: ${type}: ${message}`,
    true,
    undefined,
    undefined,
  )
}

// What an error body says, as `<type>: <message>`. The SDKs' own messages start with the status
// again and give Anthropic's body as raw JSON ("529 {\"type\":\"error\",...}").
function bodyMessage(err: unknown, status: number): string {
  const said = reportedInStream(err)
  return said ? `${said.type}: ${said.message}` : errorMessage(err).replace(new RegExp(`^${status} `), '')
}

// An SDK APIError's body is in `error`: Anthropic's whole body ({type: 'error', error: {type,
// message}}), OpenAI's `error` object ({message, type, code}). Raised without a status, it was
// reported inside a stream.
function reportedInStream(err: unknown): { type: string; message: string } | undefined {
  const body = (err as { error?: unknown })?.error as Record<string, unknown> | undefined
  if (!body || typeof body !== 'object') return undefined
  const inner = (typeof body.error === 'object' && body.error ? body.error : body) as Record<string, unknown>
  if (typeof inner.message !== 'string') return undefined
  const type = [inner.type, inner.code].find((v) => typeof v === 'string' && v !== '') as string | undefined
  return { type: type ?? 'error', message: inner.message }
}

// As both SDKs decide: the server's `x-should-retry` first, then the status. A 429 for an exhausted
// quota (OpenAI's insufficient_quota) is no rate limit: waiting does not end it.
function shouldRetry(status: number, headers: Headers | undefined, type: string | undefined): boolean {
  const told = headers?.get('x-should-retry')
  if (told === 'true') return true
  if (told === 'false') return false
  if (type === 'insufficient_quota') return false
  return status === 408 || status === 409 || status === 429 || status >= 500
}

// Turns an SDK error (both SDKs share the shape: status, headers, name) into a ProviderFailure.
export function classify(err: unknown, provider: string, stalled: boolean, stallMs: number): ProviderFailure {
  if (err instanceof ProviderFailure) return err
  if (stalled) {
    return new ProviderFailure(
      'agent.model-stalled',
      `${provider}: the stream sent nothing for ${stallMs} ms and was aborted`,
      true,
      undefined,
      0,
    )
  }
  const e = err as { status?: unknown; headers?: unknown; name?: string }
  const status = typeof e?.status === 'number' ? e.status : undefined
  const headers = e?.headers instanceof Headers ? e.headers : undefined
  if (status !== undefined) {
    const retryable = shouldRetry(status, headers, reportedInStream(err)?.type)
    return new ProviderFailure(
      `agent.model-http-${status}`,
      `${provider} answered HTTP ${status}: ${bodyMessage(err, status)}`,
      retryable,
      status,
      retryAfterMs(headers),
    )
  }
  const reported = reportedInStream(err)
  if (reported) return streamFailure(provider, reported.type, reported.message)
  // Connection refused, reset, or a stream cut before its end.
  return new ProviderFailure(
    'agent.model-unreachable',
    `${provider}: ${errorMessage(err)}${causeOf(err)}`,
    true,
    undefined,
    undefined,
  )
}

const causeOf = (err: unknown): string => {
  const c = (err as { cause?: unknown })?.cause
  return c ? ` (${errorMessage(c)})` : ''
}

// Aborts a request that goes quiet: before its first byte and between chunks.
export class StallWatch {
  readonly controller = new AbortController()
  stalled = false
  private timer: NodeJS.Timeout | undefined
  private readonly onOuter: () => void

  constructor(
    private readonly ms: number,
    private readonly outer: AbortSignal,
  ) {
    this.onOuter = () => this.controller.abort(outer.reason)
    if (outer.aborted) this.controller.abort(outer.reason)
    else outer.addEventListener('abort', this.onOuter, { once: true })
    this.kick()
  }

  get signal(): AbortSignal {
    return this.controller.signal
  }

  kick(): void {
    clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.stalled = true
      this.controller.abort(new Error('stalled'))
    }, this.ms)
    this.timer.unref()
  }

  dispose(): void {
    clearTimeout(this.timer)
    this.outer.removeEventListener('abort', this.onOuter)
  }
}
