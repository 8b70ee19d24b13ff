// Every event name a session's log, its SSE stream, the page and the library's listeners use, in
// one place. Names are dotted, <subject>.<what happened>; `output` and `interrupt` are one word.
// The kebab names of 0.1 (block-started...) are deprecated aliases, still sent for one minor
// version (SSE: an extra frame after the dotted one; docs/ARCHITECTURE.md says how) and accepted
// where a listener names an event; stored logs written with them read back dotted.
export const SESSION_EVENT_NAMES = [
  'block.started',
  'output',
  'block.finished',
  'interrupt',
  'worker.retired',
  'worker.replaced',
  'defs.restored',
  'session.closed',
] as const

// The agent loop's turns (src/agent); their blocks are the block.* events above with a turn_id.
export const TURN_EVENT_NAMES = [
  'turn.started',
  'model.delta',
  'approval.requested',
  'approval.resolved',
  'turn.warning',
  // Older iterations were folded into a summary to fit the context window (src/agent/compaction.ts).
  'turn.compacted',
  'turn.completed',
  'turn.failed',
  'turn.cancelled',
] as const

// Drafts (src/drafts).
export const DRAFT_EVENT_NAMES = ['draft.created', 'draft.applied', 'draft.abandoned'] as const

// Every event a session's log holds (and its SSE stream sends), in the order OpenAPI lists them.
export const EVENT_NAMES = [...SESSION_EVENT_NAMES, ...TURN_EVENT_NAMES, ...DRAFT_EVENT_NAMES] as const
export type EventName = (typeof EVENT_NAMES)[number]
export type SessionEventName = (typeof SESSION_EVENT_NAMES)[number]

// Deprecated since 0.2, removed in 0.3: the kebab name each dotted one had.
export const KEBAB_ALIASES = {
  'block.started': 'block-started',
  'block.finished': 'block-finished',
  'worker.retired': 'worker-retired',
  'worker.replaced': 'worker-replaced',
  'defs.restored': 'defs-restored',
  'session.closed': 'session-closed',
  'draft.created': 'draft-created',
  'draft.applied': 'draft-applied',
  'draft.abandoned': 'draft-abandoned',
} as const satisfies Partial<Record<EventName, string>>
export type KebabEventName = (typeof KEBAB_ALIASES)[keyof typeof KEBAB_ALIASES]

const DOTTED = new Map<string, EventName>(
  Object.entries(KEBAB_ALIASES).map(([dotted, kebab]) => [kebab, dotted as EventName]),
)

// The dotted name of a name that may be a deprecated kebab alias; any other name is returned as is.
export function dottedEventName<T extends string>(name: T): T extends KebabEventName ? EventName : T {
  return (DOTTED.get(name) ?? name) as T extends KebabEventName ? EventName : T
}

export function kebabAlias(name: string): KebabEventName | undefined {
  return Object.hasOwn(KEBAB_ALIASES, name) ? KEBAB_ALIASES[name as keyof typeof KEBAB_ALIASES] : undefined
}
