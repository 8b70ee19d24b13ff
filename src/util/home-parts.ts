import { join } from 'node:path'

// The parts of a vis home whose bytes a sandbox chooses. Every jail masks the home as a whole, then
// binds back into it: each worker's outbox (VIS_OUTBOX, written by its block) and each draft's folder
// (the overlay's upper directory, written through the overlay). The host itself writes two more with
// what a block hands it: the blob store (an attachment's bytes, exactly as the block made them, under
// a name the host picks) and the worker logs (a worker's stderr, which guest code writes). Whoever
// exempts "a place in the vis home" from a check for sandbox-written places must not exempt these;
// one definition here, used where they are made (worker.ts, drafts.ts, blob-store.ts, logfile.ts)
// and where they are judged (mcp-client/server-env.ts).
export const outboxesDir = (home: string): string => join(home, 'outbox')
export const draftsDir = (home: string): string => join(home, 'drafts')
export const blobsDir = (home: string): string => join(home, 'blobs')
export const logsDir = (home: string): string => join(home, 'logs')
export const sandboxWrittenParts = (home: string): string[] => [
  outboxesDir(home),
  draftsDir(home),
  blobsDir(home),
  logsDir(home),
]
