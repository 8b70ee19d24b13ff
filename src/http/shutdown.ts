import type { Engine } from '../engine/engine.js'
import { isVisError, VisError } from '../util/errors.js'

// A request that meets an engine shutting down fails because of the shutdown: its store is
// closing under it ("The database connection is not open"). Said as what it is, 503
// engine.closed, as the routes that check first already say, instead of a 500 http.internal.
export function duringShutdown(err: unknown, engine: Engine): unknown {
  if (isVisError(err) || !engine.closing) return err
  return new VisError('engine.closed', 'The server is shutting down; retry once it is back.', {
    cause: err instanceof Error ? err.message : String(err),
  })
}
