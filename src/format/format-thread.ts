// The display formatter's thread (format-pool.ts starts it): ruff's WASM parser is far from linear
// on some shapes of model-written code (seconds for 60 KB of `a()()()…`), so it runs here, never
// on the event loop that serves every session.
import { parentPort } from 'node:worker_threads'
import { errorMessage } from '../util/errors.js'
import type { FormatReply, FormatRequest } from './format-pool.js'
import { isWasmTrap, ruffEngine, ruffLoadError } from './ruff.js'

const port = parentPort!

port.on('message', (req: FormatRequest) => {
  const reply = (r: Omit<FormatReply, 'id'>) => port.postMessage({ id: req.id, ...r })
  const ruff = ruffEngine()
  if (!ruff) {
    reply({ unavailable: ruffLoadError() ?? 'ruff did not load' })
    return
  }
  // The load is done: the pool's time bound for this code runs from here.
  reply({ started: true })
  try {
    const out = ruff.format(req.code)
    // Only a bounded output crosses back to the host (see FormatRequest.maxChars).
    if (out.length > req.maxChars) reply({ tooLarge: out.length })
    else reply({ ok: out })
  } catch (err) {
    // A trap leaves the WASM memory as the unwound frames left it: the pool ends this thread.
    if (isWasmTrap(err)) reply({ trap: errorMessage(err) })
    else reply({ parseError: errorMessage(err) })
  }
})
