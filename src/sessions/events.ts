import { dottedEventName, type KEBAB_ALIASES, type KebabEventName } from '../util/event-names.js'
import type { BlockResult } from './block-result.js'

// What a session reports while it works; the HTTP layer streams these to clients.
export type SessionEvent =
  | { type: 'block.started'; sessionId: string; block: number; code: string }
  | { type: 'output'; sessionId: string; block: number; stream: 'stdout' | 'stderr'; data: string }
  | { type: 'block.finished'; sessionId: string; block: number; outcome: BlockResult; ms: number }
  // block: the session's number of the block the interrupt was sent to. Its acknowledgement can
  // reach the host after that block's reply, so listeners must not take "the current block".
  | { type: 'interrupt'; sessionId: string; block: number; landed: boolean; retired: boolean }
  | { type: 'worker.retired'; sessionId: string; pid: number; reason: string }
  | { type: 'worker.replaced'; sessionId: string; oldPid: number; pid: number; reason: string }

export type SessionEventType = SessionEvent['type']
// The kebab names of 0.1 for the session's events, deprecated (src/util/event-names.ts).
export type SessionEventAlias = (typeof KEBAB_ALIASES)[SessionEventType & keyof typeof KEBAB_ALIASES]
type Dotted<T> = { [K in keyof typeof KEBAB_ALIASES as (typeof KEBAB_ALIASES)[K]]: K }[T & KebabEventName]
export type SessionEventOf<T extends string> = Extract<
  SessionEvent,
  { type: T extends KebabEventName ? Dotted<T> : T }
>
export type SessionListener = (ev: SessionEvent) => void

export class SessionEvents {
  private readonly listeners = new Set<SessionListener>()

  subscribe(fn: SessionListener): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  // A deprecated kebab name (block-started) listens for its dotted event until 0.3.
  on<T extends SessionEventType | SessionEventAlias>(
    type: T,
    fn: (ev: SessionEventOf<T>) => void,
  ): () => void {
    const name = dottedEventName(type)
    return this.subscribe((ev) => {
      if (ev.type === name) fn(ev as SessionEventOf<T>)
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
