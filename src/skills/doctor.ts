import type { Check } from '../confinement/probe.js'
import { mapClaudeModel, mapClaudeTools } from './claude-map.js'
import type { Found } from './discover.js'

// The checks for what discovery found: pure, so the wording is tested without folders.
export function definitionChecks(found: Found, aliases: Readonly<Record<string, string>>): Check[] {
  const checks: Check[] = []
  const list = (xs: { name: string; path: string }[]) => xs.map((x) => `${x.name} (${x.path})`).join(', ')
  checks.push({
    id: 'skills',
    level: 'info',
    message: found.skills.length > 0 ? `${found.skills.length} found: ${list(found.skills)}` : 'none found',
  })
  checks.push({
    id: 'agents',
    level: 'info',
    message: found.agents.length > 0 ? `${found.agents.length} found: ${list(found.agents)}` : 'none found',
  })
  for (const s of found.shadowed) {
    checks.push({
      id: `${s.kind}s`,
      level: 'info',
      message: `${s.name} at ${s.path} is shadowed by ${s.by} (the first name wins)`,
    })
  }
  for (const p of found.problems) {
    checks.push({ id: `${p.kind}s`, level: 'warn', message: `${p.path} could not be read: ${p.reason}` })
  }
  for (const a of found.agents) {
    const tools = mapClaudeTools(a.tools)
    if (tools && tools.ignored.length > 0) {
      checks.push({
        id: 'agents',
        level: 'info',
        message: `${a.name}: tools ${tools.ignored.join(', ')} have no counterpart here and are ignored (${a.path})`,
      })
    }
    const model = mapClaudeModel(a.model, '', aliases)
    if (model.note)
      checks.push({ id: 'agents', level: 'warn', message: `${a.name}: ${model.note} (${a.path})` })
  }
  return checks
}
