import type { Context } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { z } from 'zod'
import { isVisError, VisError } from '../util/errors.js'

// Every error the API returns has this one shape.
export const ErrorEnvelopeSchema = z.object({
  error: z.object({
    code: z.string().describe('Stable, dotted, lower-case: session.not-found, http.invalid-body...'),
    message: z.string().describe('What went wrong and what to do about it.'),
    details: z.unknown().describe('Context: the session id, the invalid fields...'),
  }),
})
export type ErrorEnvelope = z.infer<typeof ErrorEnvelopeSchema>

// An error response in a route's OpenAPI description (routes.ts and the route files it
// mounts); here, not in routes.ts, so those files can use it while routes.ts imports them.
export const err = (description: string) => ({ description, schema: ErrorEnvelopeSchema })

// Status by code: exact codes first, then by suffix, so a new "*.not-found" is a 404 without
// anyone listing it here.
const EXACT: Record<string, ContentfulStatusCode> = {
  'http.invalid-json': 400,
  'http.invalid-body': 400,
  'http.invalid-query': 400,
  'http.invalid-header': 400,
  'db.invalid-input': 400,
  'confine.path-missing': 400,
  // A root inside an extension directory: the policy asked for cannot be jailed safely.
  'ext.dirs-exposed': 400,
  // Roots the jail cannot mount, said before (or instead of) a worker dying on them.
  'policy.root-too-broad': 400,
  'policy.root-not-directory': 400,
  // Roots that would expose the server (src/confinement/root-guard.ts), or lie outside the
  // operator's allow-list.
  'policy.root-pseudo-fs': 400,
  'policy.root-vis-home': 400,
  // A root inside the vis-runtime package or a CPython distribution the host runs (root-guard.ts).
  'policy.root-in-runtime': 400,
  'policy.root-not-allowed': 400,
  'policy.root-unreadable': 400,
  // A root whose path names another directory than at the session's creation (root-guard.ts).
  'policy.root-changed': 409,
  'session.jail-refused': 400,
  // An unjailed runtime's audit hook cannot express the session's network policy
  // (src/worker/native-policy.ts).
  'policy.audit-unexpressible': 400,
  // A host file tool asked to change the vis-runtime package inside a root (src/tools/fs/paths.ts).
  'tool.read-only-path': 403,
  'idempotency.key-reused': 422,
  'block.not-queued': 409,
  'http.unauthorized': 401,
  'http.body-too-large': 413,
  'http.unsupported-media-type': 415,
  // Slow or hostile clients (src/http/request-bodies.ts, connection-caps.ts).
  'http.body-timeout': 408,
  'http.too-many-connections': 503,
  'http.too-many-peer-connections': 503,
  'session.closed': 409,
  'session.exists': 409,
  'session.busy': 409,
  // Past the session's disk budget: the client frees space in the roots first (SECURITY.md).
  'session.disk-budget': 409,
  'session.owned-elsewhere': 409,
  'session.owner-unreachable': 503,
  'worker.retired': 409,
  'turn.conflict': 409,
  'db.session-exists': 409,
  'db.idempotency-conflict': 409,
  // The agent loop (src/agent): a request naming no usable model or template is the client's to fix.
  'agent.no-model': 400,
  'agent.bad-model': 400,
  'agent.no-api-key': 400,
  'agent.unknown-template': 400,
  'approval.settled': 409,
  'draft.invalid': 400,
  'draft.exists': 409,
  'draft.conflict': 409,
  'draft.none': 409,
  'draft.no-root': 400,
  'draft.path-unsupported': 400,
  'draft.path-too-long': 409,
  'draft.unconfined': 400,
  // The draft (or its real root) changed under a diff or an apply: nothing was read through a
  // swapped-in link; the client retries once the blocks that write it are done.
  'draft.changed': 409,
  'draft.apply-failed': 409,
  'draft.root-missing': 409,
  // A kernel without openat2(2): the host cannot open files beneath a directory safely.
  'confine.openat2-missing': 503,
  // No CPython for the server's minor (not staged, cached or downloadable): the operator's to
  // fix (`vis runtime fetch`), and not a missing resource, which the *.not-found rule would say.
  'dist.not-found': 503,
  'engine.closed': 503,
  'runtime.closed': 503,
}

export function statusFor(code: string): ContentfulStatusCode {
  const exact = EXACT[code]
  if (exact !== undefined) return exact
  if (code.endsWith('.not-found')) return 404
  if (code.endsWith('.path-denied') || code.endsWith('.denied')) return 403
  return 500
}

export function envelope(code: string, message: string, details: unknown = null): ErrorEnvelope {
  return { error: { code, message, details } }
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

export function httpError(code: string, message: string, details: Record<string, unknown> = {}): VisError {
  return new VisError(code, message, details)
}
