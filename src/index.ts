// vis-runtime's public surface: the engine (sessions with history, drafts, turns) as the one
// documented entry, the runtime's createRuntime → createSession → runBlock as the simple path
// without history, and the seed-named host functions over the engine's sessions addressed by key.

export {
  Agent,
  type AgentConfig,
  type AgentEvent,
  AgentSession,
  agentFor,
  createProvider,
  loadAgentConfig,
  type Provider,
  type TurnOptions,
  type TurnResult,
} from './agent/index.js'
export { createRuntime, type Runtime } from './engine/create-runtime.js'
export { createEngine, Engine, type EngineOptions } from './engine/index.js'
export {
  bindAndBump,
  bindCtx,
  type ContextOptions,
  closeSeedEngine,
  closeSeedRuntime,
  contextSessionId,
  countTopLevelForms,
  createPythonContext,
  disposePythonContext,
  forgetSessionDefs,
  interruptGuest,
  persistSessionDefs,
  pythonWorkerPids,
  restoreSessionDefs,
  retirePythonContext,
  runPythonBlock,
  setPythonBinding,
  takePartialBlockStdout,
  useSeedEngine,
  validateNoBannedDefs,
} from './engine/seed.js'
export {
  closeRegistrationWorkers,
  ExtensionRegistry,
  type ExtensionTestReport,
  type ExtensionWarning,
  extensionChecks,
  type LoadedExtension,
  type RegistryOptions,
  runExtensionTests,
} from './extensions/index.js'
export { renderError, renderOutcomeText } from './format/block-text.js'
export { type FormatResult, formatPythonForDisplay, PythonFormatter } from './format/index.js'
export {
  boundaryView,
  ctxToPythonStr,
  isSystemVarName,
  pyJsonLiteral,
  SYSTEM_VAR_NAMES,
  symToPyName,
} from './guest/index.js'
export { createApp, startServer, type VisServer } from './http/index.js'
export {
  bindMcpServers,
  createVisMcpServer,
  loadMcpConfig,
  type McpServePolicy,
  type McpServers,
  mountMcp,
  serveStdio,
} from './mcp/index.js'
export { discoverProjectLayout, type ProjectLayout, type ProjectLayoutOptions } from './project/index.js'
export {
  type BlockError,
  BlockResult,
  // Deprecated: the old name of BlockResult, kept for one minor version.
  BlockResult as BlockOutcome,
} from './sessions/block-result.js'
export type {
  SessionEvent,
  SessionEventAlias,
  SessionEventType,
  SessionListener,
} from './sessions/events.js'
export type { BindOptions, RunBlockOptions, Session, SessionState } from './sessions/session.js'
export { RuntimeOptions, SessionOptions } from './sessions/session-factory.js'
export type { BoundTool } from './sessions/tool-table.js'
export {
  catalogueEntry,
  ERROR_CATALOGUE,
  ERROR_CODES,
  type ErrorCatalogueEntry,
  type ErrorCode,
  isErrorCode,
} from './util/error-catalogue.js'
export { VisError } from './util/errors.js'
export { EVENT_NAMES, type EventName, KEBAB_ALIASES } from './util/event-names.js'
