// An IP/CIDR deny entry holds however the destination is named: by a name that resolves to it
// (every answer judged), in every spelling of the address, and for a bare address the guest
// looked up earlier by an allowed name. Allowed names to other addresses still pass.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { EgressChecker } from '../../src/confinement/egress/check.js'
import { compilePolicy, evaluate } from '../../src/confinement/egress/evaluate.js'
import { installEgressLab } from '../../src/confinement/egress/lab.js'
import { NetworkPolicySchema } from '../../src/contracts/network-policy.js'

const policy = (allow: string[], deny: string[]) =>
  compilePolicy(NetworkPolicySchema.parse({ enabled: true, allow, deny }))

const DENIED = '93.184.216.34'
const OTHER = '93.184.215.14'

// 93.184.216.34 as a resolver, libc or URL parser may spell it.
const SPELLINGS = [
  DENIED,
  '::ffff:93.184.216.34', // IPv4-mapped
  '::ffff:5db8:d822', // IPv4-mapped, hex
  '0:0:0:0:0:FFFF:5DB8:D822', // long form, upper case
  '::ffff:0:5db8:d822', // IPv4-translated
  '::93.184.216.34', // IPv4-compatible
  '1572395042', // one decimal number
  '93.12113954', // a.b short form
  '0x5d.0xb8.0xd8.0x22', // hex parts
  '0135.0270.0330.042', // octal parts
  '93.184.216.34.', // trailing dot
  '64:ff9b::5db8:d822', // NAT64 of it
  '2002:5db8:d822::1', // 6to4 of it
]

test('a deny IP entry refuses a name that resolves to the address, in every spelling of the address', () => {
  for (const deny of [DENIED, '93.184.216.0/24', '::ffff:93.184.216.34', '::ffff:93.184.216.0/120']) {
    for (const allow of [[], ['www.example.com'], ['*']]) {
      const p = policy(allow, [deny])
      for (const address of SPELLINGS) {
        const v = evaluate(p, { host: 'www.example.com', port: 443, address, tunnel: true })
        const what = `deny ${deny}, allow ${JSON.stringify(allow)}, answer ${address}`
        assert.equal(v.allowed, false, what)
        assert.equal(v.deniedBy, deny, what)
        assert.match(
          v.reason,
          /^www\.example\.com:443 \(it resolves to .+\) is refused by deny entry '/,
          what,
        )
      }
      // The other direction: the same name answering another public address is allowed.
      const ok = evaluate(p, { host: 'www.example.com', port: 443, address: OTHER, tunnel: true })
      assert.equal(ok.allowed, true, `${deny} ${JSON.stringify(allow)}: ${ok.reason}`)
    }
  }
})

test('IPv6 deny entries and ported deny entries judge the resolved address too', () => {
  const v6 = policy([], ['2606:2800:220:1::/64'])
  const hit = evaluate(v6, { host: 'v6.example', port: 443, address: '2606:2800:220:1:248:1893:25c8:1946' })
  assert.equal(hit.allowed, false)
  assert.match(hit.reason, /refused by deny entry '2606:2800:220:1::\/64'/)
  assert.equal(evaluate(v6, { host: 'v6.example', port: 443, address: '2606:2800:221::1' }).allowed, true)

  const ported = policy([], [`${DENIED}:443`])
  const https = evaluate(ported, { host: 'www.example.com', port: 443, address: DENIED })
  assert.equal(https.allowed, false)
  assert.match(https.reason, new RegExp(`refused by deny entry '${DENIED}:443'`))
  assert.equal(evaluate(ported, { host: 'www.example.com', port: 80, address: DENIED }).allowed, true)
})

test('an IP allow entry still never admits a name (only deny entries judge a name by its address)', () => {
  const p = policy([DENIED], [])
  const v = evaluate(p, { host: 'www.example.com', port: 443, address: DENIED })
  assert.equal(v.allowed, false)
  assert.match(v.reason, /is not on the allow list/)
  assert.equal(evaluate(p, { host: DENIED, port: 443, address: DENIED }).allowed, true)
})

test('the checker refuses a name with a denied answer, and the bare address after any lookup', async () => {
  const undo = installEgressLab({
    names: {
      'denied.lab.test': [DENIED],
      'mixed.lab.test': [OTHER, DENIED],
      'ok.lab.test': [OTHER],
    },
    publicRanges: [],
  })
  try {
    const checker = new EgressChecker(policy(['*.lab.test', DENIED, OTHER], [DENIED]))
    const denied = await checker.check({ host: 'denied.lab.test', port: 443, tunnel: true })
    assert.equal(denied.allowed, false)
    assert.match(
      denied.allowed ? '' : denied.reason,
      /resolves to 93\.184\.216\.34\) is refused by deny entry/,
    )
    // Every answer is judged: one denied answer among allowed ones refuses the name.
    const mixed = await checker.check({ host: 'MIXED.lab.test.', port: 443, tunnel: true })
    assert.equal(mixed.allowed, false)
    assert.match(mixed.allowed ? '' : mixed.reason, /refused by deny entry '93\.184\.216\.34'/)
    // Allowed: the name whose every answer passes, dialled at the address judged.
    const ok = await checker.check({ host: 'ok.lab.test', port: 443, tunnel: true })
    assert.ok(ok.allowed && ok.address === OTHER, JSON.stringify(ok))

    // A name remembered with the denied address (looked up before a tightening added the deny
    // entry) does not open the bare address, in any spelling.
    checker.remember('ok.lab.test', [DENIED])
    for (const host of [DENIED, '::ffff:5db8:d822', '1572395042']) {
      const bare = await checker.check({ host, port: 443, tunnel: true })
      assert.equal(bare.allowed, false, host)
      assert.match(bare.allowed ? '' : bare.reason, /refused by deny entry '93\.184\.216\.34'/, host)
    }
    // An open connection to it by that name is cut when rechecked.
    assert.equal(checker.recheck({ host: 'ok.lab.test', port: 443, tunnel: true }, DENIED).allowed, false)
    // The bare address an allowed name resolved to is still reached through the name.
    const strict = new EgressChecker(policy(['ok.lab.test'], [DENIED]))
    const looked = await strict.check({ host: 'ok.lab.test', port: 443 })
    assert.ok(looked.allowed)
    strict.remember('ok.lab.test', looked.addresses)
    assert.equal((await strict.check({ host: OTHER, port: 443, tunnel: true })).allowed, true)
  } finally {
    undo()
  }
})
