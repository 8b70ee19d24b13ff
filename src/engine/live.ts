import type { Block } from '../persistence/index.js'
import type { Session } from '../sessions/session.js'
import type { Tool } from '../tools/types.js'
import type { Waiting } from './queue.js'

// One per open session this process has touched. `session` is its runtime session once a
// worker holds it; a session opened by an earlier host process has none until its next block.
export type Live = {
  id: string
  session?: Session
  opening?: Promise<Session>
  off?: () => void
  // Blocks of one session run one at a time, in submission order.
  tail: Promise<unknown>
  queued: number
  // Accepted blocks that have not started, by id: they can be cancelled or time out waiting.
  waiting: Map<string, Waiting>
  currentBlock?: string
  // The ids of the last few blocks the worker started, by the session's block number: an
  // interrupt's acknowledgement names the number, and may arrive after its block finished.
  startedIds: Map<number, string>
  // The block handed to the worker, until the worker says it started it (then it is current):
  // a block is "running" only once an interrupt can reach it.
  starting?: Block
  // What the current block printed, kept here because a failed block's outcome has none.
  printed: string
  // The host tools bound into its worker, and the extension tools (by name) bound beside them.
  hostTools: Tool[]
  extTools: string[]
  // A read-only or review session (src/confinement/modes.ts): tools bound beside the host's own
  // (extensions', MCP servers') wait for approval (mode-gate.ts), at every binding.
  gateOutside?: boolean
  // An extension context was sent before: later blocks send one even when it became empty.
  hadContext: boolean
  // Where its roots must resolve when a worker is started again (not stored with the session).
  within?: string[]
  // Each root's identity when the session was created (or first started by this process),
  // checked at every jail and host-side open of a root (policy.root-changed).
  pins?: Record<string, string>
}

export function newLive(id: string): Live {
  return {
    id,
    tail: Promise.resolve(),
    queued: 0,
    waiting: new Map(),
    startedIds: new Map(),
    printed: '',
    hostTools: [],
    extTools: [],
    hadContext: false,
  }
}
