// The IPv4 forms inet_aton accepts besides a dotted quad: one to four parts, each decimal,
// 0x-hex or 0-octal, the last part filling the bytes left (2130706433, 0x7f.1, 0177.0.0.1,
// 127.1). The OS resolver, curl and the WHATWG URL parser all read them as addresses, so
// the egress checks must too: otherwise http://2130706433/ through the proxy (parsed by
// URL) and a CONNECT to 2130706433 (taken as a name) would be judged differently.
const PART = /^(0x[0-9a-f]*|0[0-7]*|[1-9][0-9]*)$/i

function partValue(part: string): number | undefined {
  if (!PART.test(part)) return undefined
  if (/^0x/i.test(part)) return part.length === 2 ? 0 : Number.parseInt(part.slice(2), 16)
  if (part.length > 1 && part.startsWith('0')) return Number.parseInt(part.slice(1), 8)
  return Number(part)
}

// The dotted quad a numeric host means, or undefined when it is not one of these forms.
export function canonicalIPv4(host: string): string | undefined {
  const parts = host.split('.')
  if (parts.length > 4 || parts.some((p) => p === '')) return undefined
  const values = parts.map(partValue)
  if (values.some((v) => v === undefined)) return undefined
  const nums = values as number[]
  const head = nums.slice(0, -1)
  const last = nums[nums.length - 1] as number
  if (head.some((v) => v > 255) || last >= 2 ** (8 * (5 - nums.length))) return undefined
  let value = last
  head.forEach((v, i) => {
    value += v * 2 ** (8 * (3 - i))
  })
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.')
}
