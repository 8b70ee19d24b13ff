export { Lru } from './lru.js'
export {
  DEFAULT_CACHE_ENTRIES,
  type FormatResult,
  type FormatStatus,
  type FormatterOptions,
  formatPythonForDisplay,
  MAX_FORMAT_CHARS,
  PythonFormatter,
} from './python.js'
export { type RuffEngine, ruffEngine, ruffLoadError } from './ruff.js'
