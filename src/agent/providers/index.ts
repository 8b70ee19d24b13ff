import type { ModelSpec } from '../config.js'
import { AnthropicProvider } from './anthropic.js'
import { OpenAIChatProvider } from './openai-chat.js'
import { OpenAIResponsesProvider } from './openai-responses.js'
import type { Provider } from './types.js'

export { ProviderFailure } from './failure.js'
export * from './types.js'

export function createProvider(spec: ModelSpec): Provider {
  switch (spec.provider) {
    case 'anthropic':
      return new AnthropicProvider(spec)
    case 'openai-responses':
      return new OpenAIResponsesProvider(spec)
    default:
      // openai and the local presets speak Chat Completions.
      return new OpenAIChatProvider({ ...spec, name: spec.provider })
  }
}
