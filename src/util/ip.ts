import { canonicalIPv4 } from './ipv4-forms.js'

// An IP address as its bytes: the one form every egress decision is made on. Text has too many
// spellings of one address (`::ffff:7f00:1`, `0:0:0:0:0:ffff:127.0.0.1`, `::FFFF:7F00:0001%lo`,
// `2130706433`...) for a check on text to be a check on the destination; the proxy parses
// every host and answer here, judges the bytes, and dials `formatIP` of those same bytes.
export type IP = { family: 4 | 6; bytes: Uint8Array }

const GROUP = /^[0-9a-f]{1,4}$/i

function v4Bytes(text: string): Uint8Array | undefined {
  const quad = canonicalIPv4(text)
  return quad === undefined ? undefined : Uint8Array.from(quad.split('.').map(Number))
}

// Each side of a `::`, as 16-bit groups; a dotted tail (any inet_aton form) fills two groups.
function groups(side: string, last: boolean): number[] | undefined {
  if (side === '') return []
  const parts = side.split(':')
  const out: number[] = []
  for (const [i, part] of parts.entries()) {
    if (last && i === parts.length - 1 && part.includes('.')) {
      const v4 = v4Bytes(part)
      if (!v4) return undefined
      out.push(((v4[0] ?? 0) << 8) | (v4[1] ?? 0), ((v4[2] ?? 0) << 8) | (v4[3] ?? 0))
    } else if (GROUP.test(part)) out.push(Number.parseInt(part, 16))
    else return undefined
  }
  return out
}

function v6Bytes(text: string): Uint8Array | undefined {
  const halves = text.split('::')
  if (halves.length > 2) return undefined
  const [head, tail] = halves as [string, string | undefined]
  const left = groups(head, tail === undefined)
  const right = tail === undefined ? [] : groups(tail, true)
  if (!left || !right) return undefined
  const fill = 8 - left.length - right.length
  if (tail === undefined ? fill !== 0 : fill < 1) return undefined
  const all = [...left, ...new Array<number>(tail === undefined ? 0 : fill).fill(0), ...right]
  const bytes = new Uint8Array(16)
  all.forEach((g, i) => {
    bytes[2 * i] = g >> 8
    bytes[2 * i + 1] = g & 255
  })
  return bytes
}

// Any spelling the OS, libc or a URL parser could take for an address: brackets, a zone id
// (`%lo`, `%1`, a URL's `%25lo`: dropped, the address is the same), upper case, leading zeros,
// inet_aton's IPv4 forms on their own or as the tail of an IPv6 address, an IPv4 trailing dot.
// Wider than any one of them on purpose: what parses here is judged as the address it names,
// and only that address is dialled. undefined for a host name.
export function parseIP(text: string): IP | undefined {
  let t = text.trim()
  if (t.startsWith('[') && t.endsWith(']')) t = t.slice(1, -1)
  if (t.includes(':')) {
    const zone = t.indexOf('%')
    const bytes = v6Bytes(zone < 0 ? t : t.slice(0, zone))
    return bytes ? { family: 6, bytes } : undefined
  }
  const bytes = v4Bytes(t.endsWith('.') ? t.slice(0, -1) : t)
  return bytes ? { family: 4, bytes } : undefined
}

// RFC 5952's text: lower case, the longest run of zero groups as `::`, and an IPv4-mapped
// address with its IPv4 part dotted (the form node's resolver and URL parser give).
export function formatIP(ip: IP): string {
  const b = ip.bytes
  if (ip.family === 4) return Array.from(b).join('.')
  if (b.subarray(0, 10).every((x) => x === 0) && b[10] === 255 && b[11] === 255)
    return `::ffff:${Array.from(b.subarray(12)).join('.')}`
  const g = Array.from({ length: 8 }, (_, i) => ((b[2 * i] ?? 0) << 8) | (b[2 * i + 1] ?? 0))
  let best = -1
  let bestLen = 1
  for (let i = 0; i < 8; ) {
    let j = i
    while (j < 8 && g[j] === 0) j++
    if (j - i > bestLen) {
      best = i
      bestLen = j - i
    }
    i = j === i ? i + 1 : j
  }
  const hex = (xs: number[]) => xs.map((x) => x.toString(16)).join(':')
  if (best < 0) return hex(g)
  return `${hex(g.slice(0, best))}::${hex(g.slice(best + bestLen))}`
}

// The canonical text of an address, or undefined when `text` is not one.
export function canonicalIP(text: string): string | undefined {
  const ip = parseIP(text)
  return ip ? formatIP(ip) : undefined
}

// The 16-byte form an IPv4 address has inside IPv6 (::ffff:a.b.c.d), so one prefix test
// covers both families.
export function as16(ip: IP): Uint8Array {
  if (ip.family === 6) return ip.bytes
  const out = new Uint8Array(16)
  out[10] = 255
  out[11] = 255
  out.set(ip.bytes, 12)
  return out
}

// Whether the first `prefix` bits of `a` and `b` agree.
export function samePrefix(a: Uint8Array, b: Uint8Array, prefix: number): boolean {
  for (let bit = 0; bit < prefix; bit += 8) {
    const take = Math.min(8, prefix - bit)
    const mask = (0xff << (8 - take)) & 0xff
    if (((a[bit / 8] ?? 0) & mask) !== ((b[bit / 8] ?? 0) & mask)) return false
  }
  return true
}

export const v4 = (bytes: ArrayLike<number>): IP => ({ family: 4, bytes: Uint8Array.from(bytes) })

// An IP literal with an optional `/prefix` (`10.0.0.0/8`, `::1`): the one reading of a CIDR that
// the policy's entry grammar (src/contracts/network-policy.ts) and the egress matcher share.
export function parseCidr(text: string): { ip: IP; prefix: number } | undefined {
  const [net, prefixText, ...rest] = text.split('/')
  if (!net || rest.length > 0 || net.includes('%')) return undefined
  const ip = parseIP(net)
  if (!ip) return undefined
  const max = ip.family === 4 ? 32 : 128
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined
  const prefix = prefixText === undefined ? max : Number(prefixText)
  return prefix > max ? undefined : { ip, prefix }
}
