import { ownValue } from '../util/own-key.js'

// Agent definitions written for Claude Code name its tools and its models. These map them to
// this runtime's: pure functions, so `agent(name, prompt)` and `vis doctor` agree.

// Claude Code's tool names and the host tools that do the same here. Tools with no counterpart
// (WebFetch, Task...) are ignored with a note.
const CLAUDE_TOOLS: Readonly<Record<string, readonly string[]>> = {
  Read: ['cat'],
  Edit: ['patch'],
  MultiEdit: ['patch'],
  Write: ['write'],
  Bash: ['shell'],
  Grep: ['grep'],
  Glob: ['ls'],
  LS: ['ls'],
}

const OURS = new Set(Object.values(CLAUDE_TOOLS).flat())

export type ToolMapping = { tools: string[]; ignored: string[] }

// The definition's `tools` as this runtime's tool names, in order, without duplicates. A name
// that is already ours (`cat`, `patch`...) is kept; `Bash(git:*)`-style scopes map by their
// tool. Undefined `tools` means every tool, as in Claude Code.
export function mapClaudeTools(tools: readonly string[] | undefined): ToolMapping | undefined {
  if (tools === undefined) return undefined
  const out: string[] = []
  const ignored: string[] = []
  for (const raw of tools) {
    const name = raw.replace(/\(.*\)$/, '').trim()
    // Own keys only: a tool named "constructor" in a definition is not one of Claude Code's.
    const mapped = ownValue(CLAUDE_TOOLS, name) ?? (OURS.has(name) ? [name] : undefined)
    if (!mapped) {
      ignored.push(raw)
      continue
    }
    for (const m of mapped) if (!out.includes(m)) out.push(m)
  }
  return { tools: out, ignored }
}

export type ModelMapping = { model: string; note?: string }

// The definition's `model`: none or `inherit` is the parent's; an alias (`sonnet`, `opus`,
// `haiku`...) goes through agent.json's alias table; a `<provider>/<model>` reference is used
// as written; anything else falls back to the parent's model with a note saying why.
export function mapClaudeModel(
  model: string | undefined,
  parent: string,
  aliases: Readonly<Record<string, string>>,
): ModelMapping {
  if (model === undefined || model === '' || model === 'inherit') return { model: parent }
  const alias = ownValue(aliases, model)
  if (alias !== undefined) return { model: alias }
  if (model.includes('/')) return { model }
  return {
    model: parent,
    note: `model ${JSON.stringify(model)} is not in agent.json's "aliases" (add "${model}": "<provider>/<model>"); the parent's model is used`,
  }
}
