// The agent turn loop: a model writes Python, the session runs it, until the answer.

export { type AgentConfig, loadAgentConfig, PRESETS, PROVIDERS, resolveModel } from './config.js'
export {
  Agent,
  type AgentEvent,
  type AgentListener,
  agentFor,
  type StartedTurn,
  type TurnOptions,
  type TurnResult,
} from './host.js'
export { createProvider } from './providers/index.js'
export type { Message, ModelReply, Part, Provider, ToolCall, Usage } from './providers/types.js'
export * from './schemas.js'
export { AgentSession } from './session.js'
export type { CostedUsage } from './usage.js'
