import { z } from 'zod'

// JSON Schema (the OpenAPI 3.1 dialect) from the zod schemas the API validates with, so the
// document cannot drift from what the server accepts. Below both of its users: the HTTP API's
// OpenAPI document and the MCP server's tool input schemas. It covers the zod kinds our schemas use;
// an unknown kind is an error here, not a silently empty schema.
export type JsonSchema = { [key: string]: unknown }

type Mode = 'input' | 'output'

// Schemas that get a name in `components.schemas`: wherever one appears (in its mode) the
// document says `$ref` instead of repeating it, so generated clients get named types.
export type SchemaRefs = {
  names: Map<z.ZodTypeAny, { name: string; mode: Mode }>
  defs: Record<string, JsonSchema>
}

let refs: SchemaRefs | undefined

export function toJsonSchema(schema: z.ZodTypeAny, mode: Mode = 'output'): JsonSchema {
  const named = refs?.names.get(schema)
  if (refs && named && named.mode === mode) {
    const ref = { $ref: `#/components/schemas/${named.name}` }
    if (refs.defs[named.name] !== undefined) return ref
    refs.defs[named.name] = {}
    const saved = refs
    refs = { ...saved, names: new Map([...saved.names].filter(([k]) => k !== schema)) }
    try {
      saved.defs[named.name] = toJsonSchema(schema, mode)
    } finally {
      refs = saved
    }
    return ref
  }
  const out = convert(schema, mode)
  const description = schema.description
  return description && out.description === undefined ? { ...out, description } : out
}

// Converts with named schemas collected into `r.defs` (one document at a time).
export function withRefs<T>(r: SchemaRefs, fn: () => T): T {
  const saved = refs
  refs = r
  try {
    return fn()
  } finally {
    refs = saved
  }
}

function withDescription(s: z.ZodTypeAny, js: JsonSchema): JsonSchema {
  return s.description ? { ...js, description: s.description } : js
}

function convert(s: z.ZodTypeAny, mode: Mode): JsonSchema {
  const def = s._def as { typeName: z.ZodFirstPartyTypeKind } & Record<string, any>
  switch (def.typeName) {
    case z.ZodFirstPartyTypeKind.ZodString: {
      const js: JsonSchema = { type: 'string' }
      for (const check of def.checks as { kind: string; value?: number; regex?: RegExp }[]) {
        if (check.kind === 'min') js.minLength = check.value
        if (check.kind === 'max') js.maxLength = check.value
        if (check.kind === 'regex') js.pattern = check.regex!.source
        if (check.kind === 'datetime') js.format = 'date-time'
      }
      return withDescription(s, js)
    }
    case z.ZodFirstPartyTypeKind.ZodNumber: {
      const checks = def.checks as { kind: string; value?: number; inclusive?: boolean }[]
      const js: JsonSchema = { type: checks.some((c) => c.kind === 'int') ? 'integer' : 'number' }
      for (const c of checks) {
        if (c.kind === 'min') js[c.inclusive ? 'minimum' : 'exclusiveMinimum'] = c.value
        if (c.kind === 'max') js[c.inclusive ? 'maximum' : 'exclusiveMaximum'] = c.value
      }
      return withDescription(s, js)
    }
    case z.ZodFirstPartyTypeKind.ZodBoolean:
      return withDescription(s, { type: 'boolean' })
    case z.ZodFirstPartyTypeKind.ZodNull:
      return { type: 'null' }
    case z.ZodFirstPartyTypeKind.ZodLiteral:
      return withDescription(s, { const: def.value })
    case z.ZodFirstPartyTypeKind.ZodEnum:
      return withDescription(s, { type: 'string', enum: [...def.values] })
    case z.ZodFirstPartyTypeKind.ZodArray: {
      const js: JsonSchema = { type: 'array', items: toJsonSchema(def.type, mode) }
      if (def.minLength) js.minItems = def.minLength.value
      if (def.maxLength) js.maxItems = def.maxLength.value
      return withDescription(s, js)
    }
    case z.ZodFirstPartyTypeKind.ZodObject: {
      const shape = (s as z.AnyZodObject).shape as Record<string, z.ZodTypeAny>
      const properties: Record<string, JsonSchema> = {}
      const required: string[] = []
      for (const [key, value] of Object.entries(shape)) {
        properties[key] = toJsonSchema(value, mode)
        // Input: a field with a default may be left out. Output: it is always there.
        const optionalIn = value.isOptional() || hasDefault(value)
        if (mode === 'input' ? !optionalIn : !value.isOptional()) required.push(key)
      }
      const js: JsonSchema = { type: 'object', properties }
      if (required.length > 0) js.required = required
      const catchall = def.catchall as z.ZodTypeAny
      if (catchall && !(catchall instanceof z.ZodNever))
        js.additionalProperties = toJsonSchema(catchall, mode)
      else if (def.unknownKeys === 'strict') js.additionalProperties = false
      return withDescription(s, js)
    }
    case z.ZodFirstPartyTypeKind.ZodRecord:
      return withDescription(s, { type: 'object', additionalProperties: toJsonSchema(def.valueType, mode) })
    case z.ZodFirstPartyTypeKind.ZodUnion:
      return withDescription(s, { anyOf: (def.options as z.ZodTypeAny[]).map((o) => toJsonSchema(o, mode)) })
    case z.ZodFirstPartyTypeKind.ZodOptional:
      return withDescription(s, toJsonSchema(def.innerType, mode))
    case z.ZodFirstPartyTypeKind.ZodNullable: {
      const inner = toJsonSchema(def.innerType, mode)
      // Any value already includes null; a plain type takes null beside it.
      if (Object.keys(inner).every((k) => k === 'description')) return withDescription(s, inner)
      if (typeof inner.type === 'string' && inner.$ref === undefined) {
        const js: JsonSchema = { ...inner, type: [inner.type, 'null'] }
        if (Array.isArray(inner.enum)) js.enum = [...inner.enum, null]
        return withDescription(s, js)
      }
      return withDescription(s, { anyOf: [inner, { type: 'null' }] })
    }
    case z.ZodFirstPartyTypeKind.ZodDefault: {
      const inner = toJsonSchema(def.innerType, mode)
      if (mode === 'output') return withDescription(s, { ...inner, default: def.defaultValue() })
      // In a request the default is said in words: generators (openapi-typescript) make a field
      // with a `default` required, which would force clients to send what they may leave out.
      const said = `Default: ${JSON.stringify(def.defaultValue())}.`
      const description = s.description ?? inner.description
      return { ...inner, description: description ? `${description} ${said}` : said }
    }
    case z.ZodFirstPartyTypeKind.ZodEffects:
      // Preprocess/refine/transform: the input side is the inner schema.
      return withDescription(s, toJsonSchema(def.schema, mode))
    case z.ZodFirstPartyTypeKind.ZodLazy:
      // Only the recursive JSON value uses lazy: any JSON.
      return withDescription(s, { description: 'Any JSON value.' })
    case z.ZodFirstPartyTypeKind.ZodUnknown:
    case z.ZodFirstPartyTypeKind.ZodAny:
      return withDescription(s, {})
    default:
      throw new Error(`toJsonSchema: zod kind ${def.typeName} is not supported`)
  }
}

function hasDefault(s: z.ZodTypeAny): boolean {
  if (s instanceof z.ZodDefault) return true
  if (s instanceof z.ZodOptional || s instanceof z.ZodNullable) return hasDefault(s.unwrap())
  return false
}
