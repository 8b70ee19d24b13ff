import type { BlockResult } from './block-result.js'

// What a session reports while it works; the HTTP layer streams these to clients.
export type SessionEvent =
  | { type: 'block-started'; sessionId: string; block: number; code: string }
  | { type: 'output'; sessionId: string; block: number; stream: 'stdout' | 'stderr'; data: string }
  | { type: 'block-finished'; sessionId: string; block: number; outcome: BlockResult; ms: number }
  // block: the session's number of the block the interrupt was sent to. Its acknowledgement can
  // reach the host after that block's reply, so listeners must not take "the current block".
  | { type: 'interrupt'; sessionId: string; block: number; landed: boolean; retired: boolean }
  | { type: 'worker-retired'; sessionId: string; pid: number; reason: string }
  | { type: 'worker-replaced'; sessionId: string; oldPid: number; pid: number; reason: string }

export type SessionEventType = SessionEvent['type']
export type SessionListener = (ev: SessionEvent) => void

export class SessionEvents {
  private readonly listeners = new Set<SessionListener>()

  subscribe(fn: SessionListener): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  on<T extends SessionEventType>(type: T, fn: (ev: Extract<SessionEvent, { type: T }>) => void): () => void {
    return this.subscribe((ev) => {
      if (ev.type === type) fn(ev as Extract<SessionEvent, { type: T }>)
    })
  }

  emit(ev: SessionEvent): void {
    for (const fn of this.listeners) {
      try {
        fn(ev)
      } catch {
        // A listener's failure is its own; the session keeps working.
      }
    }
  }
}
