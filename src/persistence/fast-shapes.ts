import type { BlockError, BlockRow, FinishBlockInput, StartBlockInput } from './blocks.js'
import { isJsonValue, type JsonValue } from './json.js'
import type { SessionRow } from './sessions.js'

// Hand checks for the shapes every block passes through (a row read back, a repository input
// the engine just built), each answering exactly what its zod schema would, or undefined /
// false for anything else, which then goes through the schema for its precise error: the
// pattern of parseEvent (events.ts). The zod walk of a 16-column row cost more than reading
// it. test/persistence/fast-shapes.test.ts holds each check to its schema's answers.

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v)
const isStr = (v: unknown): v is string => typeof v === 'string'
const strOrNull = (v: unknown): boolean => v === null || typeof v === 'string'
const intOrNull = (v: unknown): boolean => v === null || isInt(v)
const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

export function isBlockRow(r: unknown): r is BlockRow {
  if (!isPlainObject(r)) return false
  return (
    isStr(r.id) &&
    isStr(r.session_id) &&
    strOrNull(r.turn_id) &&
    strOrNull(r.iteration_id) &&
    isInt(r.position) &&
    isStr(r.code) &&
    isStr(r.stdout) &&
    isStr(r.stderr) &&
    strOrNull(r.result) &&
    strOrNull(r.value) &&
    strOrNull(r.error) &&
    intOrNull(r.duration_ms) &&
    (r.timed_out === 0 || r.timed_out === 1) &&
    (r.status === 'running' || r.status === 'done') &&
    isInt(r.created_at) &&
    intOrNull(r.finished_at) &&
    strOrNull(r.survived)
  )
}

export function isSessionRow(r: unknown): r is SessionRow {
  if (!isPlainObject(r)) return false
  return (
    isStr(r.id) &&
    strOrNull(r.title) &&
    isStr(r.policy) &&
    isInt(r.created_at) &&
    intOrNull(r.closed_at) &&
    isInt(r.event_seq)
  )
}

// BlockErrorSchema's answer: its own keys first (as zod orders them), then the others.
export function commonBlockError(v: unknown): BlockError | undefined {
  if (!isPlainObject(v) || !isJsonValue(v)) return undefined
  const { code, message, traceback } = v
  if (typeof message !== 'string') return undefined
  if (code !== undefined && typeof code !== 'string') return undefined
  if (traceback !== undefined && typeof traceback !== 'string') return undefined
  const out: Record<string, JsonValue> = {}
  if ('code' in v) out.code = code as string
  out.message = message
  if ('traceback' in v) out.traceback = traceback as string
  for (const k in v) if (k !== 'code' && k !== 'message' && k !== 'traceback') out[k] = v[k] as JsonValue
  return out as BlockError
}

type StartOut = Required<Pick<StartBlockInput, 'sessionId' | 'code'>> & StartBlockInput

// StartBlockInputSchema's answer (unknown keys dropped, shape order) for a valid input.
export function commonStartBlockInput(v: unknown): StartOut | undefined {
  if (!isPlainObject(v)) return undefined
  const { id, sessionId, code, turnId, iterationId, idempotencyKey, createdAt } = v
  if (id !== undefined && !(isStr(id) && id.length >= 1 && id.length <= 200)) return undefined
  if (!isStr(sessionId) || sessionId.length < 1 || !isStr(code)) return undefined
  const parent = (p: unknown) => p === undefined || p === null || (isStr(p) && p.length >= 1)
  if (!parent(turnId) || !parent(iterationId)) return undefined
  if (idempotencyKey !== undefined && !(isStr(idempotencyKey) && idempotencyKey.length >= 1)) return undefined
  if (isStr(idempotencyKey) && idempotencyKey.length > 255) return undefined
  if (createdAt !== undefined && !(isInt(createdAt) && createdAt >= 0)) return undefined
  const out: Record<string, unknown> = {}
  if ('id' in v) out.id = id
  out.sessionId = sessionId
  out.code = code
  if ('turnId' in v) out.turnId = turnId
  if ('iterationId' in v) out.iterationId = iterationId
  if ('idempotencyKey' in v) out.idempotencyKey = idempotencyKey
  if ('createdAt' in v) out.createdAt = createdAt
  return out as StartOut
}

type FinishOut = {
  stdout: string
  stderr: string
  result: JsonValue | null
  value: JsonValue | null
  error: BlockError | null
  durationMs: number
  timedOut: boolean
  survived: JsonValue | null
}

// FinishBlockInputSchema's answer (defaults filled, unknown keys dropped) for a valid input.
export function commonFinishBlockInput(v: unknown): FinishOut | undefined {
  if (!isPlainObject(v)) return undefined
  const { stdout = '', stderr = '', result = null, error = null, durationMs, timedOut = false } = v
  const survived = v.survived ?? null
  const value = v.value ?? null
  if (!isStr(stdout) || !isStr(stderr) || typeof timedOut !== 'boolean') return undefined
  if (!isInt(durationMs) || durationMs < 0) return undefined
  if (!isJsonValue(result) || !isJsonValue(value) || !isJsonValue(survived)) return undefined
  let err: BlockError | null = null
  if (error !== null) {
    const e = commonBlockError(error)
    if (e === undefined) return undefined
    err = e
  }
  return {
    stdout,
    stderr,
    result: result as JsonValue | null,
    value: value as JsonValue | null,
    error: err,
    durationMs,
    timedOut,
    survived: survived as JsonValue | null,
  } satisfies Omit<FinishBlockInput, 'attachments'>
}
