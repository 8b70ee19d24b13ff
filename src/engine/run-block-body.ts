import type { z } from 'zod'
import { DEFAULT_TIMEOUT_MS, MAX_CODE_CHARS, MAX_TIMEOUT_MS, type RunBlockBodySchema } from './schemas.js'

type RunBlockBody = z.output<typeof RunBlockBodySchema>

// The body nearly every block request carries, `{"code": "...", "timeout_ms": n}`, checked by
// hand: what RunBlockBodySchema returns for it, or undefined for anything else (a turn_id, an
// unknown key, a wrong type), which then goes through the schema for its precise error. The
// pattern of parseEvent (src/persistence/events.ts); test/http/fast-routes.test.ts holds the two
// to the same answers. The HTTP route and Engine.submitBlock (block-queue.ts) both use it.
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
