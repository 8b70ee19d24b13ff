import { VisError } from '../util/errors.js'
import { mapClaudeModel, mapClaudeTools } from './claude-map.js'
import type { AgentDefinition } from './discover.js'

// What `agent(name, prompt)` runs: the definition's body as the child's system prompt, its
// model and tools mapped to this runtime's (claude-map.ts), and the notes saying what was
// dropped. `tools` undefined: the parent's tools, as in Claude Code.
export type ResolvedAgent = {
  name: string
  system: string
  model: string
  tools?: string[]
  notes: string[]
}

export function resolveAgent(
  agents: readonly AgentDefinition[],
  name: string,
  parentModel: string,
  aliases: Readonly<Record<string, string>>,
  context: { sessionId?: string } = {},
): ResolvedAgent {
  const def = agents.find((a) => a.name === name)
  if (!def) {
    const known = agents.map((a) => a.name).join(', ')
    throw new VisError(
      'agent.definition-not-found',
      `no agent definition named '${name}'; this session's agents are: ${known || '(none: add one to .vis/agents or .claude/agents)'}`,
      { ...context, op: 'agent', name },
    )
  }
  const notes: string[] = []
  const tools = mapClaudeTools(def.tools)
  if (tools && tools.ignored.length > 0)
    notes.push(`tools ${tools.ignored.join(', ')} have no counterpart here and are ignored`)
  const model = mapClaudeModel(def.model, parentModel, aliases)
  if (model.note) notes.push(model.note)
  return {
    name: def.name,
    system: def.prompt,
    model: model.model,
    ...(tools ? { tools: tools.tools } : {}),
    notes,
  }
}
