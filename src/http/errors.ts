import type { Context } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { z } from 'zod'
import { catalogueEntry, ERROR_CODES, ERROR_FAMILIES } from '../util/error-catalogue.js'
import { type ErrorCode, isVisError, VisError } from '../util/errors.js'

// Every error the API returns has this one shape.
export const ErrorEnvelopeSchema = z.object({
  error: z.object({
    code: z
      .union([z.enum(ERROR_CODES), z.string().regex(ERROR_FAMILIES['agent.model-http-<status>'].pattern)])
      .describe(
        'Stable, dotted, lower-case: session.not-found, http.invalid-body... (docs/errors.md lists them all).',
      ),
    message: z.string().describe('What went wrong and what to do about it.'),
    details: z.unknown().describe('Context: the session id, the invalid fields...'),
  }),
})
export type ErrorEnvelope = z.infer<typeof ErrorEnvelopeSchema>

// An error response in a route's OpenAPI description (routes.ts and the route files it
// mounts); here, not in routes.ts, so those files can use it while routes.ts imports them.
export const err = (description: string) => ({ description, schema: ErrorEnvelopeSchema })

// The status of a code is the catalogue's (src/util/error-catalogue.ts); a code it does not know
// (only a peer's or a cast string can be one) is a bug of ours, so a 500.
export function statusFor(code: string): ContentfulStatusCode {
  return (catalogueEntry(code)?.status ?? 500) as ContentfulStatusCode
}

export function envelope(code: ErrorCode, message: string, details: unknown = null): ErrorEnvelope {
  return { error: { code, message, details } }
}

// An error answered without a throw (the guards, a raw socket reply, a route's own refusal): the
// status is the catalogue's, as for a thrown one.
export function errorAnswer(
  code: ErrorCode,
  message: string,
  details: unknown = null,
): { status: ContentfulStatusCode; json: ErrorEnvelope } {
  return { status: statusFor(code), json: envelope(code, message, details) }
}

// Zod issues as details a client can act on: where, and what is wrong there.
export function zodDetails(err: z.ZodError): { issues: { path: string; message: string }[] } {
  return {
    issues: err.issues.map((i) => ({
      path: i.path.length > 0 ? i.path.join('.') : '(body)',
      message: i.message,
    })),
  }
}

// The message of an invalid body says what is wrong where (the same issues are in details), so a
// person reading only the message (curl, a log line) can fix the request.
export function invalidBodyMessage(err: z.ZodError): string {
  const issues = zodDetails(err).issues.map((i) => `${i.path}: ${i.message}`)
  const shown = issues.slice(0, 5).join('; ')
  return `The request body is invalid: ${shown}${issues.length > 5 ? `; and ${issues.length - 5} more` : ''}.`
}

// What an error thrown while serving a request answers: one mapping for hono's onError and the
// fast routes (src/http/fast-routes).
export function errorReply(err: unknown): { status: ContentfulStatusCode; body: ErrorEnvelope } {
  if (err instanceof z.ZodError) {
    return {
      status: 400,
      body: envelope('http.invalid-body', invalidBodyMessage(err), zodDetails(err)),
    }
  }
  if (isVisError(err))
    return { status: statusFor(err.code), body: envelope(err.code, err.message, err.context) }
  // Anything else is our bug: say so without leaking internals beyond the message.
  const message = err instanceof Error ? err.message : String(err)
  return { status: 500, body: envelope('http.internal', `Internal error: ${message}`) }
}

export function errorResponse(c: Context, err: unknown): Response {
  const { status, body } = errorReply(err)
  return c.json(body, status)
}

export function httpError(code: ErrorCode, message: string, details: Record<string, unknown> = {}): VisError {
  return new VisError(code, message, details)
}
