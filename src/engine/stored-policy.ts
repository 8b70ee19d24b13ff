import { z } from 'zod'
import type { JsonValue } from '../persistence/index.js'
import { type Policy, PolicySchema } from './schemas.js'

// A session's row keeps the policy its client asked for plus what each root was when the
// session was created (its pins: device:inode by root path, src/confinement/root-guard.ts).
// The pins are stored so that a host restart, an upgrade or another node taking the session
// over still refuses a root whose path now names another directory (policy.root-changed)
// instead of pinning whatever the path leads to then. They are the host's bookkeeping: never
// shown to clients, never part of the policy a client may send.
const Pins = z.record(z.string(), z.string())

export function toStoredPolicy(policy: Policy, pins: Record<string, string> | undefined): JsonValue {
  const plain = JSON.parse(JSON.stringify(policy)) as { [key: string]: JsonValue }
  return policy.roots.length > 0 && pins ? { ...plain, pins } : plain
}

function split<T>(raw: T): { rest: T; pins: Record<string, string> | undefined } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || !('pins' in raw)) {
    return { rest: raw, pins: undefined }
  }
  const { pins, ...rest } = raw as Record<string, unknown>
  const parsed = Pins.safeParse(pins)
  return { rest: rest as T, pins: parsed.success ? parsed.data : undefined }
}

// The stored policy and pins. A session stored before pins were kept has none: it pins anew.
export function fromStoredPolicy(raw: unknown): { policy: Policy; pins: Record<string, string> | undefined } {
  const { rest, pins } = split(raw)
  return { policy: PolicySchema.parse(rest), pins }
}

// The policy as clients see it (session views, transcripts): without the pins.
export function shownPolicy(raw: JsonValue): JsonValue {
  return split(raw).rest
}
