import { z } from 'zod'
import type { ToolGate } from '../sessions/tool-table.js'

// The session's live state as a compaction's note names it: what the guest holds now
// (vis_guest/live_state.py) and the files the turn's host tools wrote.
export const GuestStateSchema = z.object({
  functions: z.array(z.string()),
  classes: z.array(z.string()),
  variables: z.array(z.object({ name: z.string(), type: z.string() })),
  modules: z.array(z.string()),
  omitted: z.number().int(),
})
export type LiveState = z.infer<typeof GuestStateSchema> & { files_changed: string[] }

// Paths a writing tool's arguments name: the first positional string and every `path` key one or
// two levels down (patch takes a list of edits, each with its own path).
export function pathsIn(args: unknown[]): string[] {
  const out = new Set<string>()
  const visit = (v: unknown, depth: number) => {
    if (depth > 3 || v === null || typeof v !== 'object') return
    if (Array.isArray(v)) for (const x of v) visit(x, depth + 1)
    else {
      const o = v as Record<string, unknown>
      if (typeof o.path === 'string') out.add(o.path)
      for (const x of Object.values(o)) visit(x, depth + 1)
    }
  }
  if (typeof args[0] === 'string') out.add(args[0])
  visit(args, 0)
  return [...out]
}

// Wraps the session's gate: a writing tool's call that succeeded adds the paths it named.
export function trackWrites(changed: Set<string>, gate: ToolGate): ToolGate {
  return async (call, run) => {
    const value = await gate(call, run)
    if (call.tool.writes) for (const p of pathsIn(call.args)) changed.add(p)
    return value
  }
}

const MAX_ITEMS = 60
const list = (xs: readonly string[]) =>
  xs.length > MAX_ITEMS
    ? `${xs.slice(0, MAX_ITEMS).join(', ')} … (${xs.length - MAX_ITEMS} more)`
    : xs.join(', ')

export function liveStateText(s: LiveState): string {
  const lines: string[] = []
  if (s.functions.length) lines.push(`Functions: ${list(s.functions)}`)
  if (s.classes.length) lines.push(`Classes: ${list(s.classes)}`)
  if (s.variables.length) lines.push(`Variables: ${list(s.variables.map((v) => `${v.name}: ${v.type}`))}`)
  if (s.modules.length) lines.push(`Imported modules: ${list(s.modules)}`)
  if (s.omitted > 0) lines.push(`(${s.omitted} more names not listed)`)
  if (s.files_changed.length) lines.push(`Files changed by host tools so far: ${list(s.files_changed)}`)
  return lines.join('\n')
}
