import { type ErrorCode, isErrorCode } from './error-catalogue.js'

export type { ErrorCode } from './error-catalogue.js'

// One error type for the whole engine: a stable code a program can switch on,
// a message a person can act on, and the context it happened in.
export type ErrorContext = {
  sessionId?: string
  op?: string
  path?: string
  url?: string
  [key: string]: unknown
}

// An uncatalogued code is a bug: the type already refuses a literal one, and this catches a code
// that arrives as a string at run time (from a peer, a cast). It throws where that is wanted
// loudly (the test suite, or VIS_STRICT_ERROR_CODES=1); in production the error is kept, and its
// unknown code answers as a 500.
const strictCodes = (): boolean =>
  process.env.VIS_STRICT_ERROR_CODES === '1' || process.env.NODE_TEST_CONTEXT !== undefined

export class VisError extends Error {
  readonly code: ErrorCode
  readonly context: ErrorContext

  constructor(code: ErrorCode, message: string, context: ErrorContext = {}, options?: { cause?: unknown }) {
    if (!isErrorCode(code) && strictCodes())
      throw new TypeError(
        `VisError: ${JSON.stringify(code)} is not in the error catalogue (src/util/error-catalogue.ts)`,
      )
    super(message, options)
    this.name = 'VisError'
    this.code = code
    this.context = context
  }

  toJSON(): { code: ErrorCode; message: string; context: ErrorContext } {
    return { code: this.code, message: this.message, context: this.context }
  }
}

export function isVisError(err: unknown, code?: ErrorCode): err is VisError {
  return err instanceof VisError && (code === undefined || err.code === code)
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
