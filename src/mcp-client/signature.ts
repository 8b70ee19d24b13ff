import { z } from 'zod'
import { setOwn } from '../util/own-key.js'

// How an MCP tool looks from Python: a signature derived from its input schema (required
// parameters first, then the optional ones with their defaults), and a doc made of its
// description and a line per parameter.

const PropertySchema = z
  .object({
    type: z.union([z.string(), z.array(z.string())]).optional(),
    description: z.string().optional(),
    default: z.unknown().optional(),
    enum: z.array(z.unknown()).optional(),
  })
  .passthrough()

export const InputSchemaSchema = z
  .object({
    type: z.literal('object').optional(),
    properties: z.record(PropertySchema).default({}),
    required: z.array(z.string()).default([]),
  })
  .passthrough()

export type Param = { name: string; required: boolean; python: boolean }
export type ToolShape = { signature: string; doc: string; params: Param[]; extraKeys: boolean }

const PY_KEYWORDS = new Set(
  (
    'False None True and as assert async await break class continue def del elif else except finally ' +
    'for from global if import in is lambda nonlocal not or pass raise return try while with yield'
  ).split(' '),
)
const isPythonName = (s: string) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(s) && !PY_KEYWORDS.has(s)

// A JSON default as a Python literal, when it is one.
function pyLiteral(v: unknown): string {
  if (v === null) return 'None'
  if (v === true) return 'True'
  if (v === false) return 'False'
  if (typeof v === 'number' || typeof v === 'string') return JSON.stringify(v)
  return 'None'
}

function typeText(p: z.infer<typeof PropertySchema>): string {
  if (p.enum) return p.enum.map((e) => JSON.stringify(e)).join(' | ')
  if (Array.isArray(p.type)) return p.type.join(' | ')
  return p.type ?? 'any'
}

export function toolShape(description: string | undefined, inputSchema: unknown): ToolShape {
  const parsed = InputSchemaSchema.safeParse(inputSchema ?? {})
  const schema = parsed.success ? parsed.data : { properties: {}, required: [] as string[] }
  const required = new Set(schema.required)
  const names = Object.keys(schema.properties)
  const params: Param[] = [
    ...names.filter((n) => required.has(n)),
    ...names.filter((n) => !required.has(n)),
  ].map((name) => ({ name, required: required.has(name), python: isPythonName(name) }))
  const parts: string[] = []
  for (const p of params) {
    if (!p.python) continue
    const prop = schema.properties[p.name]!
    parts.push(p.required ? p.name : `${p.name}=${pyLiteral(prop.default ?? null)}`)
  }
  // Parameters whose names Python cannot spell are passed as keywords: f(**{"max-results": 5}).
  const extraKeys = params.some((p) => !p.python)
  if (extraKeys) parts.push('**kwargs')
  const lines = [description?.trim() || '(no description)']
  if (params.length > 0) {
    lines.push('', 'Parameters:')
    for (const p of params) {
      const prop = schema.properties[p.name]!
      const opt = p.required ? '' : ', optional'
      lines.push(`  ${p.name} (${typeText(prop)}${opt})${prop.description ? `: ${prop.description}` : ''}`)
    }
  }
  return { signature: `(${parts.join(', ')})`, doc: lines.join('\n'), params, extraKeys }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

// The guest's call (positional values, keywords folded into one trailing object) as the
// tool's named arguments. A trailing object is keywords when every key names a parameter;
// otherwise it is a positional value (a parameter that takes an object).
export function namedArguments(
  tool: string,
  shape: ToolShape,
  args: unknown[],
): { ok: true; value: Record<string, unknown> } | { ok: false; message: string } {
  const known = new Set(shape.params.map((p) => p.name))
  const last = args.at(-1)
  let positional = args
  let kwargs: Record<string, unknown> = {}
  if (isPlainObject(last) && Object.keys(last).every((k) => known.has(k))) {
    positional = args.slice(0, -1)
    kwargs = last
  }
  const order = shape.params.filter((p) => p.python)
  if (positional.length > order.length) {
    return {
      ok: false,
      message: `${tool}${shape.signature} takes at most ${order.length} positional arguments, got ${positional.length}`,
    }
  }
  const out: Record<string, unknown> = { ...kwargs }
  for (const [i, v] of positional.entries()) {
    const name = order[i]!.name
    if (Object.hasOwn(kwargs, name))
      return { ok: false, message: `${tool}${shape.signature} got '${name}' twice` }
    setOwn(out, name, v)
  }
  const missing = shape.params.filter((p) => p.required && !Object.hasOwn(out, p.name)).map((p) => p.name)
  if (missing.length > 0) {
    return {
      ok: false,
      message: `${tool}${shape.signature} is missing ${missing.map((m) => `'${m}'`).join(', ')}`,
    }
  }
  return { ok: true, value: out }
}
