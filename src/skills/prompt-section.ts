// The system prompt's lists: every skill and agent definition as `name — description`, nothing
// more (the model loads a skill's body with `skill(name)` when it needs it).

export type Listed = { name: string; description: string }

// One line each: a description spread over lines is folded so the list stays a list.
const line = (x: Listed) => `- ${x.name} — ${x.description.replace(/\s+/g, ' ').trim()}`

// Listed only where the session can load them (the `skill` tool is bound).
export function skillsSection(skills: readonly Listed[], runnable: boolean): string | undefined {
  if (skills.length === 0 || !runnable) return undefined
  return [
    '# Skills',
    'Instructions and files for particular tasks. Before such a task, load the skill with `await skill(name)`: it returns the whole SKILL.md and the paths of its files.',
    '',
    ...skills.map(line),
  ].join('\n')
}

// Listed only where the session can run them (an `agent` tool is bound).
export function agentsSection(agents: readonly Listed[], runnable: boolean): string | undefined {
  if (agents.length === 0 || !runnable) return undefined
  return [
    '# Agents',
    'Named helpers you can hand a side task to with `await agent(name, prompt)`; each returns its answer as a string.',
    '',
    ...agents.map(line),
  ].join('\n')
}
