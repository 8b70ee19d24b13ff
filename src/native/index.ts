export { BUILD_COMMAND } from './addon.js'
export type { Frame, HostReply, Outcome, PythonError } from './job-outcome.js'
export { HostReplySchema, OutcomeSchema } from './job-outcome.js'
export type { Policy } from './policy.js'
export { PolicySchema } from './policy.js'
export type {
  Distribution,
  HostCallHandler,
  JobOptions,
  JobPromise,
  LoadOptions,
  OutputListener,
  PythonRuntime,
  Stream,
  WireOptions,
} from './python-runtime.js'
export { loadPython } from './python-runtime.js'
