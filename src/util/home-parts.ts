import { join } from 'node:path'

// The parts of a vis home that sandboxes write. Every jail masks the home as a whole, then binds
// back into it: each worker's outbox (VIS_OUTBOX, written by its block) and each draft's folder (the
// overlay's upper directory, written through the overlay). Whoever exempts "a place in the vis home"
// from a check for sandbox-written places must not exempt these; one definition here, used where they
// are made (worker.ts, drafts.ts) and where they are judged (mcp-client/server-env.ts).
export const outboxesDir = (home: string): string => join(home, 'outbox')
export const draftsDir = (home: string): string => join(home, 'drafts')
export const sandboxWrittenParts = (home: string): string[] => [outboxesDir(home), draftsDir(home)]
