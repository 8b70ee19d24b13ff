// One error type for the whole engine: a stable code a program can switch on,
// a message a person can act on, and the context it happened in.
export type ErrorContext = {
  sessionId?: string
  op?: string
  path?: string
  url?: string
  [key: string]: unknown
}

export class VisError extends Error {
  readonly code: string
  readonly context: ErrorContext

  constructor(code: string, message: string, context: ErrorContext = {}, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'VisError'
    this.code = code
    this.context = context
  }

  toJSON(): { code: string; message: string; context: ErrorContext } {
    return { code: this.code, message: this.message, context: this.context }
  }
}

export function isVisError(err: unknown, code?: string): err is VisError {
  return err instanceof VisError && (code === undefined || err.code === code)
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
