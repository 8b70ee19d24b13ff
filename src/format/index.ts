export { Lru } from './lru.js'
export {
  DEFAULT_CACHE_ENTRIES,
  FORMAT_TIMEOUT_MS,
  type FormatResult,
  type FormatStatus,
  type FormatterOptions,
  formatPythonForDisplay,
  formatPythonForDisplayOffLoop,
  MAX_FORMAT_CHARS,
  PythonFormatter,
} from './python.js'
export { isWasmTrap, type RuffEngine, ruffEngine, ruffLoadError } from './ruff.js'
