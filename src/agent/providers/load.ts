import type { ModelSpec } from '../config.js'
import type { Provider } from './types.js'

// createProvider (index.ts) without loading every SDK: only the one the model speaks is
// imported, for a command whose first model request is on its start-up path (vis run).
export async function loadProvider(spec: ModelSpec): Promise<Provider> {
  switch (spec.provider) {
    case 'anthropic':
      return new (await import('./anthropic.js')).AnthropicProvider(spec)
    case 'openai-responses':
      return new (await import('./openai-responses.js')).OpenAIResponsesProvider(spec)
    default:
      return new (await import('./openai-chat.js')).OpenAIChatProvider({ ...spec, name: spec.provider })
  }
}
