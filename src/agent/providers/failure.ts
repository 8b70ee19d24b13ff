import { errorMessage, VisError } from '../../util/errors.js'

// Why a model request failed, in the terms the loop decides on: retry (after how long) or not.
export class ProviderFailure extends VisError {
  constructor(
    code: string,
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
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500
    return new ProviderFailure(
      `agent.model-http-${status}`,
      `${provider} answered HTTP ${status}: ${errorMessage(err)}`,
      retryable,
      status,
      retryAfterMs(headers),
    )
  }
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
