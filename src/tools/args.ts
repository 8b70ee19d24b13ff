import type { z } from 'zod'
import { VisError } from '../util/errors.js'
import { issuesText } from '../util/zod-issues.js'

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

// Keyword arguments arrive folded into one trailing object. A tool whose
// positional parameters never take objects can split them off safely.
export function splitArgs(args: unknown[]): { positional: unknown[]; kwargs: Record<string, unknown> } {
  const last = args[args.length - 1]
  if (args.length > 0 && isPlainObject(last)) return { positional: args.slice(0, -1), kwargs: last }
  return { positional: args, kwargs: {} }
}

// Binds positional values to names, refusing a name given both ways.
export function bindNames(
  tool: string,
  signature: string,
  names: readonly string[],
  positional: unknown[],
  kwargs: Record<string, unknown>,
): Record<string, unknown> {
  if (positional.length > names.length) {
    throw badArgs(
      tool,
      signature,
      `takes at most ${names.length} positional arguments, got ${positional.length}`,
    )
  }
  const out: Record<string, unknown> = { ...kwargs }
  positional.forEach((v, i) => {
    const name = names[i]!
    if (name in kwargs) throw badArgs(tool, signature, `got '${name}' both positionally and as a keyword`)
    out[name] = v
  })
  return out
}

export function badArgs(tool: string, signature: string, detail: string): VisError {
  return new VisError('tool.bad-args', `${tool}${signature}: ${detail}`, { op: tool })
}

// Validates with zod and turns its issues into one message a model can act on.
export function parseArgs<S extends z.ZodTypeAny>(
  tool: string,
  signature: string,
  schema: S,
  value: unknown,
): z.infer<S> {
  const r = schema.safeParse(value)
  if (r.success) return r.data
  const detail = issuesText(r.error)
  throw badArgs(tool, signature, detail)
}
