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

export function ruffEngine(): RuffEngine | undefined {
  if (engine || loadError !== undefined) return engine
  try {
    const require = createRequire(import.meta.url)
    const ruff = require('@astral-sh/ruff-wasm-nodejs') as RuffModule
    const ws = new ruff.Workspace(
      { 'line-length': 100, format: { 'quote-style': 'preserve' } },
      ruff.PositionEncoding.Utf16,
    )
    engine = { format: (code) => ws.format(code), version: ruff.Workspace.version() }
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
