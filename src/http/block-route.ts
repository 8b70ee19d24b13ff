import type { Engine } from '../engine/engine.js'
import type { BlockView } from '../engine/schemas.js'
import { IdempotencyKeySchema } from '../engine/schemas.js'
import { formatManyPythonForDisplayOffLoop } from '../format/index.js'
import { jsonBytes } from '../persistence/json-bytes.js'
import { VisError } from '../util/errors.js'
import { type OnHangup, stopBlockOnHangup } from './hangup.js'
import { parseRunBlockBody } from './request-body.js'

// The two hot routes' behaviour, written once: hono's handlers (routes.ts) and the fast routes
// (src/http/fast-routes) both answer from these, so the two cannot drift apart.

export function parseIdempotencyKey(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined
  const parsed = IdempotencyKeySchema.safeParse(raw)
  if (!parsed.success) {
    throw new VisError('http.invalid-header', 'Idempotency-Key must be 1 to 255 characters.', {
      header: 'Idempotency-Key',
    })
  }
  return parsed.data
}

// RFC 7240: `Prefer: respond-async`, possibly among other preferences. (Most requests send no
// Prefer: answered without splitting anything.)
export const prefersAsyncHeader = (prefer: string | undefined): boolean =>
  prefer?.split(',').some((p) => p.trim().split(';')[0]!.trim().toLowerCase() === 'respond-async') ?? false

const blockUrl = (sessionId: string, blockId: string) =>
  `/v1/sessions/${encodeURIComponent(sessionId)}/blocks/${encodeURIComponent(blockId)}`

export type BlockReply = { status: 200 | 202; headers: Record<string, string>; body: BlockView }

export type RunBlockRequest = {
  idempotencyKey: string | undefined
  prefer: string | undefined
  // The body's text, read only once the headers passed.
  text(): Promise<string>
  onHangup: OnHangup
}

// POST /v1/sessions/{id}/blocks: waits for the outcome, or with `Prefer: respond-async` answers
// 202 once the block is accepted (durably queued).
export async function runBlockRoute(engine: Engine, id: string, req: RunBlockRequest): Promise<BlockReply> {
  const key = parseIdempotencyKey(req.idempotencyKey)
  const body = parseRunBlockBody(await req.text())
  const submitted = await engine.submitBlock(id, body, { idempotencyKey: key })
  const headers: Record<string, string> = {}
  if (submitted.replayed) headers['Idempotent-Replayed'] = 'true'
  headers.Location = blockUrl(id, submitted.id)
  if (prefersAsyncHeader(req.prefer)) {
    await submitted.accepted()
    headers['Preference-Applied'] = 'respond-async'
    return { status: submitted.block.status === 'done' ? 200 : 202, headers, body: submitted.block }
  }
  stopBlockOnHangup(req.onHangup, engine, id, submitted, key)
  return { status: 200, headers, body: await submitted.done }
}

// GET /v1/sessions/{id}/blocks/{blockId}: queued, running or done.
export function getBlockRoute(engine: Engine, id: string, blockId: string): BlockView {
  return engine.sessionBlock(id, blockId)
}

// `?format=display`: each block's code formatted for people, in the formatter thread (ruff can
// take seconds on hostile code; the event loop serves every session meanwhile). The formatter
// bounds its output (python.ts formattedBound); a view with a field bound (the session view's
// 65 536 characters) passes it as `maxChars`, and a formatted code longer than that is shown as
// written, so the answer stays within the bound (fourteenth outsider pass: 44 MiB). A view bounded
// in bytes (the session view, SESSION_PAGE_BYTES) passes what its answer may still take as
// `spareBytes`: a formatted code that is more bytes as JSON than its code takes from it, and one
// past what is left is shown as written.
// The blocks' codes are ONE call for the formatter thread (sessions take turns for it,
// `sessionId`): a view costs another session one turn, not one per block (sixteenth outsider pass).
export async function addCodeDisplay(
  sessionId: string,
  blocks: Array<{ code: string; code_display?: string }>,
  maxChars = Number.POSITIVE_INFINITY,
  spareBytes = Number.POSITIVE_INFINITY,
): Promise<void> {
  const displays = await formatManyPythonForDisplayOffLoop(
    blocks.map((b) => b.code),
    sessionId,
  )
  let spare = spareBytes
  blocks.forEach((b, i) => {
    const display = displays[i]!
    if (display.length > maxChars) {
      b.code_display = b.code
      return
    }
    const more = Number.isFinite(spare) ? jsonBytes(display) - jsonBytes(b.code) : 0
    if (more > spare) {
      b.code_display = b.code
      return
    }
    if (more > 0) spare -= more
    b.code_display = display
  })
}
