import { createRequire } from 'node:module'
import { errorMessage } from '../util/errors.js'

// The one thing this module needs from ruff's WASM build.
export type RuffEngine = { format(code: string): string; version: string }

type RuffModule = {
  Workspace: { new (options: unknown, encoding: number): { format(code: string): string }; version(): string }
  PositionEncoding: { Utf16: number }
}

// Ruff's WASM memory only grows (60–280 MB), so the host keeps exactly one workspace per
// process, created on first use. A failed load is remembered: the caller shows code verbatim.
let engine: RuffEngine | undefined
let loadError: string | undefined

const MODULE = '@astral-sh/ruff-wasm-nodejs'

// ruff reports code that does not parse as a plain Error; a RangeError (the stack overflowed
// inside WASM) or a WebAssembly.RuntimeError (out-of-bounds access...) is a trap, after which
// the module's linear memory is whatever the unwound frames left.
export function isWasmTrap(err: unknown): boolean {
  return err instanceof RangeError || (err instanceof Error && err.constructor.name === 'RuntimeError')
}

export function ruffEngine(): RuffEngine | undefined {
  if (engine || loadError !== undefined) return engine
  try {
    const require = createRequire(import.meta.url)
    const ruff = require(MODULE) as RuffModule
    const ws = new ruff.Workspace(
      { 'line-length': 100, format: { 'quote-style': 'preserve' } },
      ruff.PositionEncoding.Utf16,
    )
    const self: RuffEngine = {
      format: (code) => {
        try {
          return ws.format(code)
        } catch (err) {
          // The instance is dropped and the module forgotten, so the next call loads a fresh one
          // (the server formats in a thread it ends instead: format-pool.ts).
          if (isWasmTrap(err) && engine === self) {
            engine = undefined
            delete require.cache[require.resolve(MODULE)]
          }
          throw err
        }
      },
      version: ruff.Workspace.version(),
    }
    engine = self
  } catch (err) {
    loadError = errorMessage(err)
  }
  return engine
}

// Why ruff is not available in this process, if it is not.
export function ruffLoadError(): string | undefined {
  ruffEngine()
  return loadError
}
