import { z } from 'zod'
import { parseCidr, parseIP } from '../util/ip.js'

// The ONE definition of a session's network policy: its entries' grammar and the zod schemas
// the wire (src/protocol), the jail policy (jail-policy.ts), the engine's API and the egress
// proxy all take. The egress proxy (the boundary), the guest's early refusals and
// network_probe (which ask that proxy) and the tool jail's proxy evaluate these entries with
// src/confinement/egress/evaluate.ts; nothing else matches hosts.
//
// Entry syntax: `*`, `example.com` (the name and its subdomains), `*.example.com`
// (subdomains only), an IP literal or CIDR (`203.0.113.7`, `10.0.0.0/8`, `[::1]`,
// `fd00::/8`), each optionally followed by `:443` or a port list `:80,443`
// (IPv6 takes a port only in brackets: `[::1]:8080`).

export type EntrySyntax = {
  kind: 'any' | 'name' | 'subdomains' | 'address'
  // lower-case name without a trailing dot (name/subdomains), the IP/CIDR (address)
  value: string
  ports?: number[]
}

const NAME =
  /^(?=.{1,253}$)([a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/

function parsePorts(text: string): number[] | undefined {
  const ports = text.split(',').map((p) => (/^\d{1,5}$/.test(p) ? Number(p) : Number.NaN))
  return ports.every((p) => p >= 1 && p <= 65535) ? [...new Set(ports)].sort((a, b) => a - b) : undefined
}

// What an entry names, or undefined when it is malformed (the egress matcher adds the address
// pattern: src/confinement/egress/network-entries.ts parseEntry).
export function parseEntrySyntax(raw: string): EntrySyntax | undefined {
  let text = raw.trim().toLowerCase()
  let ports: number[] | undefined
  const bracket = /^\[([^\]]+)\](\/\d+)?(?::([\d,]+))?$/.exec(text)
  if (bracket) {
    text = `${bracket[1]}${bracket[2] ?? ''}`
    if (bracket[3] !== undefined) {
      ports = parsePorts(bracket[3])
      if (!ports) return undefined
    }
  } else if ((text.match(/:/g) ?? []).length === 1) {
    const at = text.lastIndexOf(':')
    ports = parsePorts(text.slice(at + 1))
    if (!ports) return undefined
    text = text.slice(0, at)
  }
  const withPorts = (e: Omit<EntrySyntax, 'ports'>): EntrySyntax => (ports ? { ...e, ports } : e)
  if (text === '*') return withPorts({ kind: 'any', value: '*' })
  if (parseCidr(text)) return withPorts({ kind: 'address', value: text })
  // A CIDR with a bad prefix, an address with a zone id, an IPv6 spelling no parser takes.
  if (parseIP(text.split('/')[0] ?? '') !== undefined || /[:%[\]]/.test(text)) return undefined
  const name = text.replace(/\.$/, '')
  if (name.startsWith('*.')) {
    return NAME.test(name.slice(2)) ? withPorts({ kind: 'subdomains', value: name.slice(2) }) : undefined
  }
  return NAME.test(name) ? withPorts({ kind: 'name', value: name }) : undefined
}

const EntryText = z
  .string()
  .min(1)
  .max(300)
  .refine((e) => parseEntrySyntax(e) !== undefined, {
    message:
      "must be '*', a host name ('example.com', '*.example.com'), an IP or CIDR, optionally with ':port' or ':80,443'",
  })

const Glob = z.string().min(1).max(300)

// A rule's lists are capped too (eighteenth outsider pass: one rule of unbounded `paths` made a
// 1 MiB policy, listed whole with its session); a session's whole policy is bounded in bytes
// (MAX_POLICY_BYTES, checked when a session is created: policy.too-large).
export const MAX_RULE_METHODS = 64
export const MAX_RULE_PATHS = 4096

// A per-host rule: access 'read-only' = GET/HEAD/OPTIONS; 'none' refuses the host like
// a deny entry; methods and paths narrow what plain HTTP through the proxy may do.
export const NetworkRuleSchema = z
  .object({
    host: EntryText,
    access: z.enum(['read-only', 'full', 'none']).default('full'),
    methods: z
      .array(
        z
          .string()
          .max(32)
          .regex(/^([A-Za-z]+|\*)$/),
      )
      .max(MAX_RULE_METHODS)
      .optional(),
    paths: z.array(Glob).max(MAX_RULE_PATHS).optional(),
  })
  .strict()

export const NetworkEntrySchema = z.union([EntryText, NetworkRuleSchema])
export const NetworkDenySchema = EntryText

// Each list is capped: every entry is matched on every connection and lookup.
export const MAX_NETWORK_ENTRIES = 256

export const NetworkPolicySchema = z
  .object({
    enabled: z.boolean().default(false).describe('Whether the session may reach the network at all.'),
    // Empty with the network on: every public destination (the address floor still applies).
    // Every derived form keeps that meaning (src/worker/native-policy.ts).
    allow: z
      .array(NetworkEntrySchema)
      .max(MAX_NETWORK_ENTRIES)
      .default([])
      .describe(
        "Allowed destinations: '*', 'example.com' (and subdomains), '*.example.com', an IP or CIDR, optionally ':443' or ':80,443'; or a rule {host, access: 'read-only'|'full'|'none', methods, paths}. Empty: every public destination.",
      ),
    deny: z
      .array(NetworkDenySchema)
      .max(MAX_NETWORK_ENTRIES)
      .default([])
      .describe('Refused destinations (same syntax); a specific deny beats a specific allow.'),
  })
  .strict()

export type NetworkRule = z.infer<typeof NetworkRuleSchema>
export type NetworkEntry = z.infer<typeof NetworkEntrySchema>
export type NetworkEntryInput = z.input<typeof NetworkEntrySchema>
export type NetworkPolicy = z.infer<typeof NetworkPolicySchema>
