import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { z } from 'zod'
import type { NetworkEntry } from '../contracts/network-policy.js'
import type { JsonValue } from '../persistence/index.js'
import { tightenedNetwork } from '../sessions/session-policy.js'
import { type SessionPolicy as Policy, SessionPolicySchema as PolicySchema } from './schemas.js'

// A session's row keeps the policy its client asked for plus what each root was when the
// session was created (its pins: device:inode by root path, src/confinement/root-guard.ts).
// The pins are stored so that a host restart, an upgrade or another node taking the session
// over still refuses a root whose path now names another directory (policy.root-changed)
// instead of pinning whatever the path leads to then. They are the host's bookkeeping: never
// shown to clients, never part of the policy a client may send.
const Pins = z.record(z.string(), z.string())
const HOST_KEYS = ['pins', 'pinned_on'] as const

// Device numbers are this machine's: another node of a cluster sees a shared filesystem under
// its own. Pins say where they were taken, and elsewhere only the inode is compared.
let machine: string | undefined
export function machineId(): string {
  if (machine === undefined) {
    try {
      machine = readFileSync('/etc/machine-id', 'utf8').trim() || hostname()
    } catch {
      machine = hostname()
    }
  }
  return machine
}

export function toStoredPolicy(policy: Policy, pins: Record<string, string> | undefined): JsonValue {
  const plain = JSON.parse(JSON.stringify(policy)) as { [key: string]: JsonValue }
  return policy.roots.length > 0 && pins ? { ...plain, pins, pinned_on: machineId() } : plain
}

type StoredPins = { pins: Record<string, string>; here: boolean } | undefined

function split<T>(raw: T): { rest: T; pins: StoredPins } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || !HOST_KEYS.some((k) => k in raw)) {
    return { rest: raw, pins: undefined }
  }
  const { pins, pinned_on: on, ...rest } = raw as Record<string, unknown>
  const parsed = Pins.safeParse(pins)
  return {
    rest: rest as T,
    pins: parsed.success ? { pins: parsed.data, here: on === machineId() } : undefined,
  }
}

// The stored policy and pins. A session stored before pins were kept has none: it pins anew.
export function fromStoredPolicy(raw: unknown): { policy: Policy; pins: StoredPins } {
  const { rest, pins } = split(raw)
  return { policy: PolicySchema.parse(rest), pins }
}

// The stored policy after a network tightening the session's worker accepted (its reply:
// what the worker applies now). The policy is read through its one schema, and only `network`
// changes, narrowed as the worker narrowed it (tightenedNetwork): the pins, and where they were
// taken, stay as stored.
export function withTightenedNetwork(
  raw: JsonValue,
  net: { enabled: boolean; allow: NetworkEntry[] },
): JsonValue {
  const { policy } = fromStoredPolicy(raw)
  const network = tightenedNetwork(policy.network, net)
  return {
    ...(raw as { [key: string]: JsonValue }),
    network: JSON.parse(JSON.stringify(network)) as JsonValue,
  }
}

// The policy as clients see it (session views, transcripts): without the pins.
export function shownPolicy(raw: JsonValue): JsonValue {
  return split(raw).rest
}

// Whether a root's identity now matches its stored pin: the whole device:inode on the machine
// that took it, the inode alone on another.
export function samePin(stored: string, now: string, here: boolean): boolean {
  return here ? stored === now : stored.split(':')[1] === now.split(':')[1]
}
