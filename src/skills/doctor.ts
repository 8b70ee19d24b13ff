import { homedir } from 'node:os'
import { loadAgentConfig } from '../agent/config.js'
import type { Check } from '../confinement/probe.js'
import { visHome } from '../util/home.js'
import { mapClaudeModel, mapClaudeTools } from './claude-map.js'
import { discover, type Found } from './discover.js'

// `vis doctor`: the skills and agent definitions a session rooted at the project would get,
// what shadows what, every file that could not be read (with the reason), and what an agent
// definition written for Claude Code names that has no counterpart here.
export async function skillChecks(opts: {
  project: string
  home?: string
  userHome?: string
}): Promise<Check[]> {
  const found = await discover({
    roots: [opts.project],
    visHome: visHome(opts.home),
    userHome: opts.userHome ?? homedir(),
  })
  let aliases: Record<string, string> = {}
  try {
    aliases = loadAgentConfig({ home: opts.home }).aliases
  } catch {
    // agent.json's own problem is the agent-model check's to report.
  }
  return definitionChecks(found, aliases)
}

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
