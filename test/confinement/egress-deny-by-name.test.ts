// An IP/CIDR deny entry holds however the destination is named: by a name that resolves to it
// (every answer judged), in every spelling of the address, and for a bare address the guest
// looked up earlier by an allowed name. Allowed names to other addresses still pass.
import assert from 'node:assert/strict'
import { createServer, get, request, type Server } from 'node:http'
import { test } from 'node:test'
import { EgressChecker } from '../../src/confinement/egress/check.js'
import { compilePolicy, evaluate } from '../../src/confinement/egress/evaluate.js'
import { installEgressLab } from '../../src/confinement/egress/lab.js'
import { startEgressProxy } from '../../src/confinement/egress/proxy.js'
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

const listen = (host: string, seen: string[]) =>
  new Promise<Server>((resolve, reject) => {
    const srv = createServer((req, res) => {
      seen.push(`${host}${req.url}`)
      res.end('reached')
    })
    srv.once('error', reject)
    srv.listen(0, host, () => resolve(srv))
  })

const getVia = (socketPath: string, url: string) =>
  new Promise<{ status: number; message: string; body: string }>((resolve, reject) => {
    get({ socketPath, path: url, headers: { host: new URL(url).host } }, (res) => {
      let body = ''
      res.on('data', (d) => {
        body += d
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, message: res.statusMessage ?? '', body }))
    }).on('error', reject)
  })

const connectVia = (socketPath: string, authority: string) =>
  new Promise<{ status: number; message: string }>((resolve, reject) => {
    const req = request({ socketPath, method: 'CONNECT', path: authority })
    req.on('connect', (res, socket) => {
      socket.destroy()
      resolve({ status: res.statusCode ?? 0, message: res.statusMessage ?? '' })
    })
    req.on('response', (res) => resolve({ status: res.statusCode ?? 0, message: res.statusMessage ?? '' }))
    req.on('error', reject)
    req.end()
  })

test('through the proxy: a name whose answer flips to the denied address is refused on that answer, and what is dialled is what was judged', async () => {
  const seen: string[] = []
  const denied = await listen('127.0.0.2', seen)
  const other = await listen('127.0.0.3', seen)
  const port = (s: Server) => (s.address() as { port: number }).port
  // A rebinding name: every lookup answers the other address from the one before.
  let flips = 0
  const undo = installEgressLab({
    names: {
      'flip.lab.test': () => [flips++ % 2 === 0 ? '127.0.0.3' : '::ffff:127.0.0.2'],
      'denied.lab.test': ['127.0.0.2'],
    },
    publicRanges: ['127.0.0.2/32', '127.0.0.3/32'],
  })
  const proxy = await startEgressProxy({ allow: [], deny: ['127.0.0.2'] })
  try {
    for (let i = 0; i < 4; i++) {
      // Both listeners share no port, so each request names the port of the address it should
      // reach when allowed; the denied listener must never see one.
      const r = await getVia(
        proxy.socketPath,
        `http://flip.lab.test:${port(i % 2 === 0 ? other : denied)}/try${i}`,
      )
      if (i % 2 === 0) assert.equal(r.status, 200, `${r.status} ${r.message}`)
      else {
        assert.equal(r.status, 403)
        assert.match(
          r.message,
          /flip\.lab\.test:\d+ \(it resolves to ::ffff:127\.0\.0\.2\) is refused by deny entry '127\.0\.0\.2'/,
        )
      }
    }
    const tunnel = await connectVia(proxy.socketPath, `denied.lab.test:${port(denied)}`)
    assert.equal(tunnel.status, 403)
    assert.match(tunnel.message, /refused by deny entry '127\.0\.0\.2'/)
    assert.deepEqual(seen, ['127.0.0.3/try0', '127.0.0.3/try2'])
  } finally {
    await proxy.close()
    undo()
    for (const s of [denied, other]) {
      s.closeAllConnections()
      await new Promise<void>((resolve) => s.close(() => resolve()))
    }
  }
})
