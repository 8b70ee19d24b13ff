export { Lru, type LruWeight } from './lru.js'
export {
  DEFAULT_CACHE_CHARS,
  DEFAULT_CACHE_ENTRIES,
  FORMAT_GROWTH_FLOOR_CHARS,
  FORMAT_TIMEOUT_MS,
  type FormatResult,
  type FormatStatus,
  type FormatterOptions,
  formatManyPythonForDisplayOffLoop,
  formatPythonForDisplay,
  formatPythonForDisplayOffLoop,
  formattedBound,
  MAX_FORMAT_CHARS,
  MAX_FORMAT_GROWTH,
  MAX_FORMATTED_CHARS,
  PythonFormatter,
} from './python.js'
export { isWasmTrap, type RuffEngine, ruffEngine, ruffLoadError } from './ruff.js'
