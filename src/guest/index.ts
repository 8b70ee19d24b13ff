// Pure-TypeScript helpers for what crosses into the guest runtime (vis-guest/).
export { boundaryView } from './boundary-view.js'
export { ctxToPythonStr, pyJsonLiteral } from './py-literal.js'
export { pyNumber, pyString } from './py-string.js'
export {
  DEFAULT_TOOL_HINTS,
  type GuestRuntimeOptions,
  guestRuntimeConfig,
  PROCESS_SURFACE,
} from './runtime-config.js'
export { symToPyName } from './sym-to-py-name.js'
export { isSystemVarName, SYSTEM_VAR_NAMES } from './system-vars.js'
