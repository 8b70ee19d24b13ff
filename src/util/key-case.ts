import { z } from 'zod'

// One object, two casings: snake_case where it crosses to Python, storage, HTTP and MCP,
// camelCase in the TypeScript library. The camelCase schema is derived from the snake_case
// one and the values are converted by walking that schema, so a field added to the one
// definition reaches both casings without a hand-written mapping. Record keys (data, not
// field names) are left alone.

type Camel<S extends string> = S extends `${infer H}_${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S

export type CamelKeys<T> = T extends readonly (infer E)[]
  ? CamelKeys<E>[]
  : T extends Record<string, unknown>
    ? string extends keyof T
      ? T
      : { [K in keyof T as K extends string ? Camel<K> : K]: CamelKeys<T[K]> }
    : T

export const camelKey = (key: string): string =>
  key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())

// The schema of the camelCase form: same checks, field names recased at every object level.
export function camelSchema<T extends z.ZodTypeAny>(schema: T): z.ZodType<CamelKeys<z.output<T>>> {
  return recaseSchema(schema) as z.ZodType<CamelKeys<z.output<T>>>
}

function recaseSchema(s: z.ZodTypeAny): z.ZodTypeAny {
  if (s instanceof z.ZodObject) {
    const shape: z.ZodRawShape = {}
    for (const [k, v] of Object.entries(s.shape as z.ZodRawShape)) shape[camelKey(k)] = recaseSchema(v)
    return z.object(shape)
  }
  if (s instanceof z.ZodArray) return z.array(recaseSchema(s.element))
  if (s instanceof z.ZodOptional) return recaseSchema(s.unwrap()).optional()
  if (s instanceof z.ZodNullable) return recaseSchema(s.unwrap()).nullable()
  return s
}

// Each object the schema declares, with its declared fields recased (a field the value lacks
// stays absent). Going to camelCase, the snake_case name stays readable on the new object, not
// enumerable (JSON and spreads show one casing): a deprecated alias for callers moving over.
function recaseValue(schema: z.ZodTypeAny, value: unknown, to: 'camel' | 'snake'): unknown {
  if (value === null || value === undefined) return value
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable)
    return recaseValue(schema.unwrap(), value, to)
  if (schema instanceof z.ZodArray && Array.isArray(value))
    return value.map((v) => recaseValue(schema.element, v, to))
  if (schema instanceof z.ZodObject && typeof value === 'object' && !Array.isArray(value)) {
    const src = value as Record<string, unknown>
    const out: Record<string, unknown> = {}
    for (const [k, field] of Object.entries(schema.shape as z.ZodRawShape)) {
      const camel = camelKey(k)
      const [from, into] = to === 'camel' ? [k, camel] : [camel, k]
      if (src[from] === undefined) continue
      out[into] = recaseValue(field, src[from], to)
      if (to === 'camel' && into !== from) {
        Object.defineProperty(out, from, { get: () => out[into], enumerable: false, configurable: true })
      }
    }
    return out
  }
  return value
}

// snake_case value (as `schema` declares it) → camelCase, keeping the snake_case names as
// hidden, deprecated aliases.
export function toCamel<T extends z.ZodTypeAny>(schema: T, value: z.output<T>): CamelKeys<z.output<T>> {
  return recaseValue(schema, value, 'camel') as CamelKeys<z.output<T>>
}

// camelCase value → the snake_case form `schema` declares.
export function toSnake<T extends z.ZodTypeAny>(schema: T, value: CamelKeys<z.output<T>>): z.output<T> {
  return recaseValue(schema, value, 'snake') as z.output<T>
}
