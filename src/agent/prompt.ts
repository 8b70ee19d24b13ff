import { agentsSection, type Listed, skillsSection } from '../skills/prompt-section.js'
import type { Instruction } from './instructions.js'

export type ToolSpec = { name: string; doc: string; signature: string; approval?: 'required' }
export type PromptPolicy = {
  roots: string[]
  network: { enabled: boolean; allow?: string[]; deny?: string[] }
  shell: boolean
}

// How a block runs, as the model must know it. Kept in one place so every provider reads the same.
function coreRules(policy: PromptPolicy, toolCalling: boolean): string {
  const run = toolCalling
    ? 'You act by calling the `python_execution` tool with one block of Python in `code`.'
    : 'You act by writing ONE fenced ```python block in your reply; the first such block runs. Write no block when you answer.'
  const net = policy.network.enabled
    ? `The network is open${policy.network.allow?.length ? ` to ${policy.network.allow.join(', ')} only` : ''}${
        policy.network.deny?.length ? `, never to ${policy.network.deny.join(', ')}` : ''
      }.`
    : 'The network is closed: no request leaves this session.'
  const roots =
    policy.roots.length > 0
      ? `Session roots (read-write; the first is the workspace and the current directory): ${policy.roots.join(', ')}. Nothing outside them is reachable.`
      : 'This session has no roots: no files are reachable.'
  return [
    '# How you work',
    `You are an agent working in a Python session. ${run} You then read what it printed, its result and any error, and write the next block, until you can answer.`,
    'When the task is done, reply with your answer as plain text and no tool call: that ends the turn.',
    '',
    '## Blocks',
    '- A block runs as one whole: its globals (variables, functions, imports) persist into the next block.',
    '- The value of the last expression is returned as the result; print what you want to read.',
    '- Output is clipped at 65,536 characters: print summaries, slices and counts, not whole files or datasets.',
    '- Host tools below are async functions. A bare call statement is settled for you (`cat("a.py")` runs); use its value with `x = await tool(...)`; `await gather(a(), b())` runs calls together.',
    '- `doc(name)` shows a tool or helper, `apropos(word)` searches them, `defs()` lists what you defined.',
    '- Errors come back as `✗ <phase> error: <message>` with the lines around it and hints: read them and change approach instead of repeating the same code.',
    '- A block that runs too long is interrupted; long work should be split.',
    '',
    '## The sandbox',
    `- ${roots}`,
    `- ${net}`,
    policy.shell
      ? '- Processes are never spawned from Python (subprocess, os.system): run commands with the `shell(...)` tool.'
      : '- Processes cannot be spawned in this session: Python process APIs are refused and there is no shell tool.',
  ].join('\n')
}

function toolSection(tools: readonly ToolSpec[]): string {
  if (tools.length === 0) return '# Host tools\n(none are bound in this session)'
  const lines = ['# Host tools', 'Callable from your Python as functions (see "Blocks" above):', '']
  for (const t of [...tools].sort((a, b) => a.name.localeCompare(b.name))) {
    const gate = t.approval === 'required' ? ' [each call waits for a person to approve it]' : ''
    lines.push(`## ${t.name}${t.signature}${gate}`)
    if (t.doc.trim() !== '') lines.push(t.doc.trim())
    lines.push('')
  }
  return lines.join('\n').trimEnd()
}

export type PromptInput = {
  policy: PromptPolicy
  tools: readonly ToolSpec[]
  instructions: readonly Instruction[]
  fragments: readonly { name: string; text: string }[]
  toolCalling: boolean
  // Discovered skills and agent definitions (src/skills), listed by name and description.
  skills?: readonly Listed[]
  agents?: readonly Listed[]
}

// The system prompt in the issue's order: core rules, tools, project instructions, extension
// fragments. The user's message follows as its own message.
export function systemPrompt(p: PromptInput): string {
  const parts = [coreRules(p.policy, p.toolCalling), toolSection(p.tools)]
  const skills = skillsSection(
    p.skills ?? [],
    p.tools.some((t) => t.name === 'skill'),
  )
  if (skills) parts.push(skills)
  const agents = agentsSection(
    p.agents ?? [],
    p.tools.some((t) => t.name === 'agent'),
  )
  if (agents) parts.push(agents)
  if (p.instructions.length > 0) {
    parts.push(
      [
        '# Project instructions',
        "Files from the vis home, then the workspace's ancestors, then the roots; later (nearer) files take precedence.",
        ...p.instructions.map((i) => `\n## ${i.path}\n\n${i.text.trimEnd()}`),
      ].join('\n'),
    )
  }
  for (const f of p.fragments) parts.push(`# From the ${f.name} extension\n\n${f.text.trim()}`)
  return parts.join('\n\n')
}
