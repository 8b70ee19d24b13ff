// A deny entry spelled in one of the IPv6 forms that carry an IPv4 address (IPv4-mapped,
// -translated, -compatible, NAT64, 6to4, Teredo; a literal or a CIDR) refuses the IPv4
// address(es) it stands for, in every spelling, read by the same table of forms that reads a
// dialled address (address.ts FORMS). The allowed direction: neighbours it does not stand for
// still pass, and an entry wider than a form (2000::/3) or the IPv6 loopback names no IPv4.
// The whole path (a block, the proxy, a listener) is test/attacks/egress-deny-entry-ipv6-spelling.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseAddressPattern } from '../../src/confinement/egress/address.js'
import { type IP, parseIP } from '../../src/util/ip.js'

const ip = (s: string) => parseIP(s) as IP
const denies = (entry: string, dialled: string) => {
  const p = parseAddressPattern(entry)
  assert.ok(p, entry)
  return p.denies(ip(dialled))
}
// 127.0.0.2 as dialled in each spelling the dialled side already reads.
const SPELLINGS_OF_127_0_0_2 = [
  '127.0.0.2',
  '::ffff:127.0.0.2',
  '::ffff:0:127.0.0.2',
  '::127.0.0.2',
  '64:ff9b::127.0.0.2',
  '2002:7f00:2::1',
]

test('an entry in any carrying form denies the IPv4 address it stands for, in every spelling', () => {
  for (const entry of [
    '127.0.0.2',
    '::ffff:127.0.0.2',
    '::ffff:0:127.0.0.2',
    '::127.0.0.2',
    '64:ff9b::127.0.0.2',
    '64:ff9b::7f00:2/128',
    '2002:7f00:2::/48',
    '2002:7f00:2:1::9',
    // Teredo server 127.0.0.2, client 0.0.0.0 (obfuscated).
    '2001:0:7f00:2::ffff:ffff',
    // Teredo client 127.0.0.2 (obfuscated: XOR 0xff) behind server 0.0.0.0.
    '2001::ffff:ffff:80ff:fffd',
  ]) {
    for (const d of SPELLINGS_OF_127_0_0_2) assert.equal(denies(entry, d), true, `${entry} denies ${d}`)
    assert.equal(denies(entry, '127.0.0.3'), false, `${entry} leaves 127.0.0.3`)
    assert.equal(denies(entry, '::ffff:0:127.0.0.3'), false, `${entry} leaves ::ffff:0:127.0.0.3`)
  }
})

test('a CIDR entry in a carrying form denies the IPv4 range it stands for', () => {
  for (const entry of ['64:ff9b::10.0.0.0/104', '::ffff:0:10.0.0.0/104', '::10.0.0.0/104', '2002:a00::/24']) {
    assert.equal(denies(entry, '10.1.2.3'), true, entry)
    assert.equal(denies(entry, '64:ff9b::10.200.0.1'), true, entry)
    assert.equal(denies(entry, '11.0.0.1'), false, entry)
  }
  // A whole gateway form stands for every IPv4 address through it: deny fails closed.
  // A Teredo server's /64 holds every client behind it, so it stands for every IPv4 address too.
  for (const entry of ['64:ff9b::/96', '2002::/16', '2001:0:7f00:2::/64'])
    assert.equal(denies(entry, '93.184.216.34'), true, entry)
})

test('an entry that names no IPv4 address denies none', () => {
  // Wider than any form: about IPv6 only (::/0 covers everything by its own bytes anyway).
  assert.equal(denies('2000::/3', '93.184.216.34'), false)
  // :: and ::1 are not IPv4-compatible 0.0.0.0 / 0.0.0.1.
  assert.equal(denies('::1', '0.0.0.1'), false)
  assert.equal(denies('::1', '127.0.0.1'), false)
  assert.equal(denies('::/127', '0.0.0.1'), false)
  // An ordinary IPv6 entry still denies itself only.
  assert.equal(denies('2606:4700::1111', '2606:4700::1111'), true)
  assert.equal(denies('2606:4700::1111', '127.0.0.2'), false)
})
