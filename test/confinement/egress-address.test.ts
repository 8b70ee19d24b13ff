// Issue 30 §1: every spelling of a forbidden address is judged as the bytes it names. A table of
// spellings (the IPv6 forms that carry an IPv4 address, zone ids, case, leading zeros, inet_aton
// tails, brackets, trailing dots), each parsed, classified, and put through the evaluator with
// the lists that let the most through; then the real proxy, by CONNECT and by absolute URI, to a
// real listener on the host's loopback: refused in every spelling, reached once it is named.
import assert from 'node:assert/strict'
import { connect, createServer, type Server } from 'node:net'
import { networkInterfaces } from 'node:os'
import { test } from 'node:test'
import { classifyAddress } from '../../src/confinement/egress/address.js'
import { EgressChecker } from '../../src/confinement/egress/check.js'
import { compilePolicy, evaluate } from '../../src/confinement/egress/evaluate.js'
import { protectPort } from '../../src/confinement/egress/guard.js'
import { installEgressLab } from '../../src/confinement/egress/lab.js'
import { parseEntry } from '../../src/confinement/egress/network-entries.js'
import { startEgressProxy } from '../../src/confinement/egress/proxy.js'
import { NetworkPolicySchema } from '../../src/contracts/network-policy.js'
import { canonicalIP } from '../../src/util/ip.js'

type Row = [spelling: string, canonical: string, floor: 'never' | 'private' | 'public', label: RegExp]

// 127.0.0.1 and ::1 in every form a parser could take.
const LOOPBACK: Row[] = [
  ['127.0.0.1', '127.0.0.1', 'private', /^loopback$/],
  ['127.0.0.1.', '127.0.0.1', 'private', /^loopback$/],
  ['2130706433', '127.0.0.1', 'private', /^loopback$/],
  ['0x7f.1', '127.0.0.1', 'private', /^loopback$/],
  ['0177.0.0.1', '127.0.0.1', 'private', /^loopback$/],
  ['127.1', '127.0.0.1', 'private', /^loopback$/],
  ['127.255.255.254', '127.255.255.254', 'private', /^loopback$/],
  // IPv4-mapped ::ffff:0:0/96, as the issue found them and as an attacker would vary them
  ['::ffff:7f00:1', '::ffff:127.0.0.1', 'private', /^loopback$/],
  ['::ffff:127.0.0.1', '::ffff:127.0.0.1', 'private', /^loopback$/],
  ['0::ffff:7f00:1', '::ffff:127.0.0.1', 'private', /^loopback$/],
  ['0:0:0:0:0:ffff:7f00:1', '::ffff:127.0.0.1', 'private', /^loopback$/],
  ['0:0:0:0:0:ffff:127.0.0.1', '::ffff:127.0.0.1', 'private', /^loopback$/],
  ['0000:0000:0000:0000:0000:FFFF:7F00:0001', '::ffff:127.0.0.1', 'private', /^loopback$/],
  ['::FFFF:7F00:1', '::ffff:127.0.0.1', 'private', /^loopback$/],
  ['::ffff:7f00:1%lo', '::ffff:127.0.0.1', 'private', /^loopback$/],
  ['::ffff:7f00:1%1', '::ffff:127.0.0.1', 'private', /^loopback$/],
  ['::ffff:7f00:1%25lo', '::ffff:127.0.0.1', 'private', /^loopback$/],
  ['::ffff:7f00:1%', '::ffff:127.0.0.1', 'private', /^loopback$/],
  ['[::ffff:7f00:1]', '::ffff:127.0.0.1', 'private', /^loopback$/],
  ['::ffff:127.1', '::ffff:127.0.0.1', 'private', /^loopback$/],
  ['::ffff:0x7f.1', '::ffff:127.0.0.1', 'private', /^loopback$/],
  ['::ffff:0177.0.0.1', '::ffff:127.0.0.1', 'private', /^loopback$/],
  // IPv4-compatible ::/96 and IPv4-translated ::ffff:0:0:0/96
  ['::7f00:1', '::7f00:1', 'private', /^loopback$/],
  ['::127.0.0.1', '::7f00:1', 'private', /^loopback$/],
  ['0:0:0:0:0:0:7f00:1', '::7f00:1', 'private', /^loopback$/],
  ['::ffff:0:7f00:1', '::ffff:0:7f00:1', 'private', /^loopback$/],
  ['::ffff:0:127.0.0.1', '::ffff:0:7f00:1', 'private', /^loopback$/],
  // ::1
  ['::1', '::1', 'private', /^loopback$/],
  ['0:0:0:0:0:0:0:1', '::1', 'private', /^loopback$/],
  ['::0001', '::1', 'private', /^loopback$/],
  ['::1%lo', '::1', 'private', /^loopback$/],
  ['[::1]', '::1', 'private', /^loopback$/],
]

const NEVER: Row[] = [
  ['169.254.169.254', '169.254.169.254', 'never', /^link-local \(cloud metadata\)$/],
  ['::a9fe:a9fe', '::a9fe:a9fe', 'never', /^link-local \(cloud metadata\)$/],
  ['::ffff:a9fe:a9fe', '::ffff:169.254.169.254', 'never', /^link-local \(cloud metadata\)$/],
  ['0:0:0:0:0:ffff:169.254.169.254', '::ffff:169.254.169.254', 'never', /^link-local/],
  ['::ffff:0:a9fe:a9fe', '::ffff:0:a9fe:a9fe', 'never', /^link-local/],
  ['64:ff9b::a9fe:a9fe', '64:ff9b::a9fe:a9fe', 'never', /^NAT64 of link-local/],
  ['64:ff9b::169.254.169.254', '64:ff9b::a9fe:a9fe', 'never', /^NAT64 of link-local/],
  ['2002:a9fe:a9fe::', '2002:a9fe:a9fe::', 'never', /^6to4 of link-local/],
  ['2001:0:a9fe:a9fe::1', '2001:0:a9fe:a9fe::1', 'never', /^Teredo server of link-local/],
  // the client's address is stored inverted: 5601:5601 is 169.254.169.254
  ['2001:0:808:808::5601:5601', '2001:0:808:808::5601:5601', 'never', /^Teredo client of link-local/],
  ['::', '::', 'never', /^unspecified$/],
  ['[::]', '::', 'never', /^unspecified$/],
  ['0:0:0:0:0:0:0:0', '::', 'never', /^unspecified$/],
  ['0.0.0.0', '0.0.0.0', 'never', /^unspecified$/],
  ['0', '0.0.0.0', 'never', /^unspecified$/],
  ['::ffff:0.0.0.0', '::ffff:0.0.0.0', 'never', /^unspecified$/],
  ['::ffff:0:0', '::ffff:0.0.0.0', 'never', /^unspecified$/],
  ['::2', '::2', 'never', /^unspecified$/],
  ['fe80::1%eth0', 'fe80::1', 'never', /^link-local$/],
  ['FE80::1', 'fe80::1', 'never', /^link-local$/],
  ['ff02::1', 'ff02::1', 'never', /^multicast$/],
  ['::ffff:224.0.0.1', '::ffff:224.0.0.1', 'never', /^multicast$/],
  ['255.255.255.255', '255.255.255.255', 'never', /^reserved$/],
]

// Gateway forms carrying a private address: private, and named only by an IPv4 entry.
const GATEWAYS: Row[] = [
  ['64:ff9b::7f00:1', '64:ff9b::7f00:1', 'private', /^NAT64$/],
  ['2002:7f00:1::', '2002:7f00:1::', 'private', /^6to4$/],
  ['2002:0a00:0001::1', '2002:a00:1::1', 'private', /^6to4$/],
  // server 127.0.0.1, client 8.8.8.8 (stored inverted)
  ['2001:0:7f00:1::f7f7:f7f7', '2001:0:7f00:1::f7f7:f7f7', 'private', /^Teredo$/],
  ['2001:0:808:808::80ff:fffe', '2001:0:808:808::80ff:fffe', 'private', /^Teredo$/],
  ['::ffff:10.1.2.3', '::ffff:10.1.2.3', 'private', /^private \(RFC 1918\)$/],
]

const PUBLIC: Row[] = [
  ['8.8.8.8', '8.8.8.8', 'public', /^$/],
  ['2606:4700:4700::1111', '2606:4700:4700::1111', 'public', /^$/],
  ['2606:4700:4700:0000:0000:0000:0000:1111', '2606:4700:4700::1111', 'public', /^$/],
  ['2606:4700:4700:0:0:0:0:1111%eth0', '2606:4700:4700::1111', 'public', /^$/],
  ['::ffff:8.8.8.8', '::ffff:8.8.8.8', 'private', /^IPv4-mapped$/],
  ['1:0:0:2::', '1:0:0:2::', 'public', /^$/],
  ['1:0:0:2:0:0:0:3', '1:0:0:2::3', 'public', /^$/],
]

// Hosts that are no address and no name: refused before any lookup.
const MALFORMED = [
  '::ffff:2130706433',
  '00000::1',
  '1:2:3:4:5:6:7:8:9',
  '1:2:3:4:5:6:7:8::',
  ':::1',
  '::ffff:7f00:1:',
  ':ffff:7f00:1',
  '::ffff:256.0.0.1',
  '::ffff:127.0.0.1.1.1',
  '127.0.0.1%lo',
  '1::2::3',
  '::g',
]

const policy = (allow: string[], deny: string[] = []) =>
  compilePolicy(NetworkPolicySchema.parse({ enabled: true, allow, deny }))
const judge = (allow: string[], host: string, port = 80) =>
  evaluate(policy(allow), { host, port, address: host, tunnel: true })

test('every spelling parses to the bytes it names, in one canonical text, and is classified by them', () => {
  for (const [spelling, canonical, floor, label] of [...LOOPBACK, ...NEVER, ...GATEWAYS, ...PUBLIC]) {
    assert.equal(canonicalIP(spelling), canonical, spelling)
    const c = classifyAddress(spelling)
    assert.equal(c.floor, floor, spelling)
    assert.match(c.floor === 'public' ? '' : c.label, label, spelling)
  }
  for (const m of MALFORMED) {
    assert.equal(canonicalIP(m), undefined, m)
    assert.deepEqual(classifyAddress(m), { floor: 'never', label: 'not an IP address' }, m)
  }
})

test("with allow [] or ['*'], no spelling of loopback, metadata, unspecified or a private gateway form passes", () => {
  for (const allow of [[], ['*']]) {
    for (const [spelling, canonical] of LOOPBACK) {
      const v = judge(allow, spelling)
      assert.equal(v.allowed, false, spelling)
      assert.equal(
        v.reason,
        `${canonical} (loopback): reachable only through an allow entry naming that IP or CIDR`,
        spelling,
      )
    }
    for (const [spelling, canonical] of NEVER) {
      const v = judge(allow, spelling)
      const { label } = classifyAddress(spelling) as { label: string }
      assert.equal(v.reason, `${canonical} (${label}): never reachable, whatever the lists say`, spelling)
    }
    for (const [spelling] of GATEWAYS) {
      assert.match(
        judge(allow, spelling).reason,
        /reachable only through an allow entry naming that IP or CIDR/,
      )
    }
    for (const m of MALFORMED) {
      const v = judge(allow, m)
      assert.equal(v.allowed, false, m)
      assert.match(v.reason, /is neither a host name nor an IP address|not an IP address/, m)
    }
    // ... and ordinary public addresses, in any spelling, still pass.
    for (const [spelling, , floor] of PUBLIC)
      if (floor === 'public') assert.equal(judge(allow, spelling).allowed, true, spelling)
  }
})

test('naming an address admits its spellings; a carried private IPv4 address is named only by an IPv4 entry', () => {
  for (const s of [
    '127.0.0.1',
    '::ffff:7f00:1',
    '0:0:0:0:0:ffff:7f00:1',
    '::7f00:1',
    '::ffff:0:7f00:1',
    '127.1',
  ]) {
    const v = judge(['127.0.0.1'], s)
    assert.equal(v.allowed, true, `${s}: ${v.reason}`)
    assert.equal(v.rule, '127.0.0.1')
  }
  // A gateway form is another address: the IPv4 entry does not cover it.
  assert.match(judge(['127.0.0.1'], '2002:7f00:1::').reason, /is not on the allow list/)
  // Covering all of IPv6 is not naming 127.0.0.1 (nor 10.1.2.3).
  assert.equal(
    judge(['::/0'], '::ffff:7f00:1').reason,
    '::ffff:127.0.0.1 carries 127.0.0.1 (loopback): reachable only through an allow entry naming that IPv4 address or range',
  )
  assert.equal(
    judge(['::/0'], '127.0.0.1').reason,
    '127.0.0.1 (loopback): reachable only through an allow entry naming that IPv4 address or range',
  )
  // An entry names a special range only from inside it: ::/0 and all of IPv4 name no loopback.
  assert.equal(
    judge(['::/0'], '::1').reason,
    '::1 (loopback): reachable only through an allow entry naming that IP or a CIDR inside its range',
  )
  assert.match(judge(['::/0'], 'fd00::1').reason, /\(ULA\): reachable only through/)
  assert.match(judge(['0.0.0.0/0'], '10.0.0.1').reason, /naming that IPv4 address or range/)
  assert.match(judge(['::ffff:0:0/96'], '::ffff:7f00:1').reason, /naming that IPv4 address or range/)
  assert.equal(judge(['::1'], '::1').allowed, true)
  assert.equal(judge(['fd00::/8'], 'fd00::1').allowed, true)
  assert.equal(judge(['10.0.0.0/8'], '10.0.0.1').allowed, true)
  assert.equal(judge(['::ffff:127.0.0.0/104'], '::ffff:7f00:1').allowed, true)
  assert.equal(judge(['::/0'], '2606:4700::1111').allowed, true)
  assert.equal(judge(['0.0.0.0/0'], '8.8.8.8').allowed, true)
  // Local-use NAT64 (RFC 8215) cannot be decoded: only an entry inside 64:ff9b:1::/48 reaches it.
  for (const s of ['64:ff9b:1::a9fe:a9fe', '64:ff9b:1::a00:1', '64:ff9b:1::7f00:1', '64:ff9b:1:ffff::1'])
    assert.match(judge(['::/0', '64::/16'], s).reason, /\(local-use NAT64\): reachable only through/, s)
  assert.equal(judge(['64:ff9b:1::/48'], '64:ff9b:1::a00:1').allowed, true)
  // 6to4 and NAT64 named: what they carry must still be public, or named as IPv4.
  assert.match(judge(['2002::/16'], '2002:7f00:1::').reason, /carries 127\.0\.0\.1 \(loopback\)/)
  assert.match(
    judge(['64:ff9b::/96'], '64:ff9b::a00:1').reason,
    /carries 10\.0\.0\.1 \(private \(RFC 1918\)\)/,
  )
  assert.equal(judge(['2002::/16'], '2002:808:808::').allowed, true)
  assert.equal(judge(['64:ff9b::/96'], '64:ff9b::8.8.8.8').allowed, true)
  assert.match(judge(['2001::/32'], '2001:0:808:808::80ff:fffe').reason, /carries 127\.0\.0\.1/)
  // The never ranges stay refused whoever names them, in any spelling.
  for (const s of ['::a9fe:a9fe', '64:ff9b::a9fe:a9fe', '::ffff:0:a9fe:a9fe', '2002:a9fe:a9fe::'])
    assert.match(
      judge(['169.254.169.254', '::/0', '64:ff9b::/96', '2002::/16'], s).reason,
      /never reachable/,
      s,
    )
  // Entries: zone ids and spellings no parser takes are refused by the schema.
  for (const e of ['fe80::1%lo', '[::1%lo]:80', '00000::1', '1::2::3'])
    assert.equal(parseEntry(e), undefined, e)
  assert.equal(parseEntry('[0:0:0:0:0:ffff:7f00:1]:80')?.kind, 'address')
})

test("the host's own listening ports stay refused on its addresses however spelled", () => {
  const release = protectPort(40998)
  const local = Object.values(networkInterfaces())
    .flatMap((l) => l ?? [])
    .map((a) => a.address)
    .filter((a) => classifyAddress(a).floor !== 'never')
  const allow = ['*', '127.0.0.0/8', '::1', ...local]
  try {
    const own = [
      ...LOOPBACK.map(([s]) => s),
      ...local.filter((a) => !a.includes(':')).map((a) => `::ffff:${a}`),
      ...local.filter((a) => !a.includes(':')).map((a) => `0:0:0:0:0:ffff:${a}`),
    ]
    for (const s of own) {
      const v = judge(allow, s, 40998)
      assert.equal(v.allowed, false, s)
      assert.match(
        v.reason,
        /is the vis host's own listening port \(server or egress relay\): never reachable$/,
        s,
      )
      assert.equal(judge(allow, s, 40997).allowed, true, s)
    }
  } finally {
    release()
  }
})

test('answers are judged in their canonical text, and an answer that is no address is refused', async () => {
  const undo = installEgressLab({
    names: {
      'mapped.test': ['0:0:0:0:0:ffff:7f00:1'],
      'odd.test': ['not-an-address'],
      'v6.test': ['2606:4700:4700:0:0:0:0:1111'],
    },
    publicRanges: [],
  })
  try {
    const c = new EgressChecker(policy(['*']))
    const mapped = await c.check({ host: 'mapped.test', port: 80 })
    assert.equal(mapped.allowed, false)
    assert.match(
      mapped.allowed ? '' : mapped.reason,
      /^mapped\.test resolves to ::ffff:127\.0\.0\.1 \(loopback\)/,
    )
    const odd = await c.check({ host: 'odd.test', port: 80 })
    assert.match(
      odd.allowed ? '' : odd.reason,
      /odd\.test resolved to not-an-address, which is not an IP address/,
    )
    const v6 = await c.check({ host: 'v6.test', port: 80 })
    assert.equal(v6.allowed && v6.address, '2606:4700:4700::1111')
    // The guest connects to the address its lookup gave, in whatever spelling: the name decides.
    const named = new EgressChecker(policy(['v6.test']))
    named.remember('v6.test', ['2606:4700:4700::1111'])
    assert.equal((await named.check({ host: '2606:4700:4700:0:0:0:0:1111', port: 443 })).allowed, true)
  } finally {
    undo()
  }
})

// The status line a proxy gives a request written as is (no client library to tidy it); for a
// tunnel that opened, followed by what the far side sent before it closed.
function ask(socketPath: string, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ path: socketPath })
    let got = ''
    const line = () => got.split('\r\n')[0] ?? ''
    s.on('data', (d) => {
      got += d
      if (got.includes('\r\n\r\n') && !got.startsWith('HTTP/1.1 200')) {
        s.destroy()
        resolve(line())
      }
    })
    s.on('error', reject)
    s.on('close', () =>
      resolve(got.startsWith('HTTP/1.1 200') ? `${line()} ${got.split('\r\n\r\n')[1]}` : line()),
    )
    s.write(text)
  })
}

test('the proxy, by CONNECT and absolute URI, refuses every spelling of a loopback listener; naming it admits them', async () => {
  let hits = 0
  const trap: Server = createServer((s) => {
    hits++
    s.on('error', () => undefined)
    s.end('trap')
  })
  await new Promise<void>((r) => trap.listen(0, '::', () => r()))
  const port = (trap.address() as { port: number }).port
  const v6 = LOOPBACK.map(([s]) => s).filter((s) => s.includes(':'))
  const v4 = LOOPBACK.map(([s]) => s).filter((s) => !s.includes(':'))
  const authority = (s: string) => (s.includes(':') && !s.startsWith('[') ? `[${s}]` : s)
  // Compatible and translated addresses are not routed to loopback by the kernel: no answer.
  const reachable = LOOPBACK.filter(([, c]) => c !== '::7f00:1' && c !== '::ffff:0:7f00:1').map(([s]) => s)
  const attempts = (s: string) => [
    `CONNECT ${authority(s)}:${port} HTTP/1.1\r\nHost: ${authority(s)}:${port}\r\n\r\n`,
    `GET http://${authority(s)}:${port}/ HTTP/1.1\r\nHost: ${authority(s)}:${port}\r\nConnection: close\r\n\r\n`,
  ]
  try {
    for (const allow of [[], ['*']]) {
      const proxy = await startEgressProxy({ allow, deny: [] })
      try {
        for (const s of [...v6, ...v4]) {
          const [tunnel, plain] = attempts(s) as [string, string]
          assert.match(
            await ask(proxy.socketPath, tunnel),
            /^HTTP\/1\.1 403 vis egress refused: .*\(loopback\)/,
            s,
          )
          // Node's URL parser refuses zone ids and inet_aton tails in brackets outright (400).
          assert.match(
            await ask(proxy.socketPath, plain),
            /^HTTP\/1\.1 (403 vis egress refused: .*\(loopback\)|400)/,
            s,
          )
        }
      } finally {
        await proxy.close()
      }
    }
    // The unspecified address reaches every local listener: never, even when loopback is named.
    const named = await startEgressProxy({
      allow: ['*', '127.0.0.0/8', '::1', '::/0', '0.0.0.0/0'],
      deny: [],
    })
    try {
      for (const s of [
        '::',
        '[::]',
        '0:0:0:0:0:0:0:0',
        '::ffff:0.0.0.0',
        '::ffff:0:0',
        '0.0.0.0',
        '0',
        '0.0.0.0.',
      ])
        assert.match(
          await ask(named.socketPath, attempts(s)[0] as string),
          /^HTTP\/1\.1 403 vis egress refused: .*\(unspecified\): never reachable/,
          s,
        )
    } finally {
      await named.close()
    }
    assert.equal(hits, 0, 'nothing reached the loopback listener')
    // Named, every spelling reaches it (both directions) ... unless it is the host's own port.
    const proxy = await startEgressProxy({ allow: ['127.0.0.0/8', '::1'], deny: [] })
    try {
      for (const s of reachable)
        assert.equal(
          await ask(proxy.socketPath, attempts(s)[0] as string),
          'HTTP/1.1 200 Connection Established trap',
          s,
        )
      assert.equal(hits, reachable.length)
      const release = protectPort(port)
      try {
        for (const s of [...v6, ...v4])
          assert.match(await ask(proxy.socketPath, attempts(s)[0] as string), /own listening port/, s)
      } finally {
        release()
      }
      assert.equal(hits, reachable.length)
    } finally {
      await proxy.close()
    }
  } finally {
    trap.close()
  }
})
