import type { z } from 'zod'
import { DEFAULT_TIMEOUT_MS, MAX_CODE_CHARS, MAX_TIMEOUT_MS, RunBlockBodySchema } from '../engine/schemas.js'
import { VisError } from '../util/errors.js'
import { zodDetails } from './errors.js'

// A request body is JSON or absent; absent reads as {} so `POST /v1/sessions` with no body works.
function parseJson(text: string): unknown {
  if (text.trim() === '') return {}
  try {
    return JSON.parse(text)
  } catch (err) {
    throw new VisError('http.invalid-json', `The request body is not JSON: ${(err as Error).message}`)
  }
}

function validate<S extends z.ZodTypeAny>(value: unknown, schema: S): z.output<S> {
  const parsed = schema.safeParse(value)
  if (!parsed.success) {
    throw new VisError('http.invalid-body', 'The request body is invalid.', zodDetails(parsed.error))
  }
  return parsed.data
}

export const parseJsonBody = <S extends z.ZodTypeAny>(text: string, schema: S): z.output<S> =>
  validate(parseJson(text), schema)

type RunBlockBody = z.output<typeof RunBlockBodySchema>

// The body nearly every block request carries, `{"code": "...", "timeout_ms": n}`, checked by
// hand: what RunBlockBodySchema returns for it, or undefined for anything else (a turn_id, an
// unknown key, a wrong type), which then goes through the schema for its precise error. The
// pattern of parseEvent (src/persistence/events.ts); test/http/fast-routes.test.ts holds the two
// to the same answers.
export function commonRunBlockBody(value: unknown): RunBlockBody | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  for (const key in value) if (key !== 'code' && key !== 'timeout_ms') return undefined
  const { code, timeout_ms } = value as { code?: unknown; timeout_ms?: unknown }
  if (typeof code !== 'string' || code.length > MAX_CODE_CHARS) return undefined
  if (timeout_ms === undefined) return { code, timeout_ms: DEFAULT_TIMEOUT_MS }
  if (typeof timeout_ms !== 'number' || !Number.isInteger(timeout_ms)) return undefined
  if (timeout_ms < 1 || timeout_ms > MAX_TIMEOUT_MS) return undefined
  return { code, timeout_ms }
}

export function parseRunBlockBody(text: string): RunBlockBody {
  const value = parseJson(text)
  return commonRunBlockBody(value) ?? validate(value, RunBlockBodySchema)
}
