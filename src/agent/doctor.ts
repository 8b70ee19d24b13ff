import { homedir } from 'node:os'
import type { Check } from '../confinement/probe.js'
import { discover } from '../skills/discover.js'
import { definitionChecks } from '../skills/doctor.js'
import { errorMessage } from '../util/errors.js'
import { visHome } from '../util/home.js'
import { loadAgentConfig, resolveModel } from './config.js'
import { createProvider } from './providers/index.js'

// `vis doctor`: the configured model, and whether its endpoint answers.
export async function agentChecks(timeoutMs = 5000): Promise<Check[]> {
  let spec: ReturnType<typeof resolveModel>
  try {
    spec = resolveModel(undefined, loadAgentConfig())
  } catch (err) {
    const none = (err as { code?: string }).code === 'agent.no-model'
    return [{ id: 'agent-model', level: none ? 'info' : 'warn', message: errorMessage(err) }]
  }
  const where = spec.baseURL ?? (spec.provider === 'anthropic' ? 'api.anthropic.com' : 'api.openai.com')
  const label = `${spec.provider}/${spec.model} at ${where}${spec.toolCalling ? '' : ' (no tool calling: fenced blocks)'}`
  try {
    const answer = await createProvider(spec).ping(AbortSignal.timeout(timeoutMs))
    return [{ id: 'agent-model', level: 'info', message: `${label}: ${answer}` }]
  } catch (err) {
    return [{ id: 'agent-model', level: 'warn', message: `${label} does not answer: ${errorMessage(err)}` }]
  }
}

// `vis doctor`: the skills and agent definitions a session rooted at the project would get,
// what shadows what, every file that could not be read (with the reason), and what an agent
// definition written for Claude Code names that has no counterpart here (its models through
// agent.json's aliases, which is why this lives with the agent and not in src/skills).
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
