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
