import { z } from 'zod'
import { VisError } from '../util/errors.js'

// The recursive type has to be spelled out once for zod's lazy schema; everything else infers.
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue }

export const JsonValueSchema: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([
    z.string(),
    z.number().finite(),
    z.boolean(),
    z.null(),
    z.array(JsonValueSchema),
    z.record(z.string(), JsonValueSchema),
  ]),
)

export const JsonObjectSchema = z.record(z.string(), JsonValueSchema)
export type JsonObject = z.infer<typeof JsonObjectSchema>

export function encodeJson(value: JsonValue): string {
  return JSON.stringify(value)
}

export function decodeJson(text: string): JsonValue {
  return JSON.parse(text) as JsonValue
}

export function decodeNullableJson(text: string | null): JsonValue | null {
  return text === null ? null : decodeJson(text)
}

// A plain JSON value (finite numbers, plain objects and arrays, no cycles deeper than the
// recursion): the fast path of parseJsonValue. Walking the value once is ~50x cheaper than the
// recursive zod union, which dominated every event append on the block hot path.
export function isJsonValue(v: unknown, depth = 0): boolean {
  if (depth > 200) return false
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true
    case 'number':
      return Number.isFinite(v)
    case 'object': {
      if (v === null) return true
      if (Array.isArray(v)) {
        for (const x of v) if (!isJsonValue(x, depth + 1)) return false
        return true
      }
      const proto = Object.getPrototypeOf(v)
      if (proto !== Object.prototype && proto !== null) return false
      for (const k in v) if (!isJsonValue((v as Record<string, unknown>)[k], depth + 1)) return false
      return true
    }
    default:
      return false
  }
}

// JsonValueSchema's check, fast for the common valid value; an invalid one goes through the
// schema so the error names the same key path it always did.
export function parseJsonValue(value: unknown, op: string): JsonValue {
  if (isJsonValue(value)) return value as JsonValue
  return parseInput(JsonValueSchema, value, op)
}

// Repository inputs are a boundary: a bad one is the caller's bug, reported with its key path.
export function parseInput<S extends z.ZodTypeAny>(schema: S, value: unknown, op: string): z.output<S> {
  const parsed = schema.safeParse(value)
  if (parsed.success) return parsed.data
  const issue = parsed.error.issues[0]
  const where = issue && issue.path.length > 0 ? issue.path.join('.') : '(input)'
  throw new VisError('db.invalid-input', `${op}: ${where}: ${issue?.message ?? 'invalid'}`, {
    op,
    issues: parsed.error.issues,
  })
}
