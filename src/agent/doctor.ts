import type { Check } from '../confinement/probe.js'
import { errorMessage } from '../util/errors.js'
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
