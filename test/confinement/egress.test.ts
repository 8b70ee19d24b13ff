import assert from 'node:assert/strict'
import { createServer, get, request, type Server } from 'node:http'
import type { Socket } from 'node:net'
import { test } from 'node:test'
import { classifyAddress, specialRange } from '../../src/confinement/egress/address.js'
import { EgressChecker } from '../../src/confinement/egress/check.js'
import { compilePolicy, evaluate } from '../../src/confinement/egress/evaluate.js'
import { startEgressForwarder } from '../../src/confinement/egress/forwarder.js'
import { protectPort } from '../../src/confinement/egress/guard.js'
import { egressChecks } from '../../src/confinement/egress/health.js'
import { installEgressLab } from '../../src/confinement/egress/lab.js'
import { parseEntry } from '../../src/confinement/egress/network-entries.js'
import { startEgressProxy } from '../../src/confinement/egress/proxy.js'
import { type NetworkEntryInput, NetworkPolicySchema } from '../../src/contracts/network-policy.js'
import { canonicalIPv4 } from '../../src/util/ipv4-forms.js'

test('the address floor: never, private (IP entries only) and public', () => {
  const never = [
    '169.254.169.254',
    '0.0.0.0',
    '224.0.0.1',
    'fe80::1',
    '::',
    'ff02::1',
    '::ffff:169.254.169.254',
    '255.255.255.255',
    // NAT64 to the metadata service: as refused as the address it carries (issue 30).
    '64:ff9b::a9fe:a9fe',
  ]
  for (const a of never) assert.equal(classifyAddress(a).floor, 'never', a)
  const priv: [string, RegExp][] = [
    ['127.0.0.1', /loopback/],
    ['10.1.2.3', /RFC 1918/],
    ['172.16.0.1', /RFC 1918/],
    ['192.168.1.1', /RFC 1918/],
    ['100.64.0.1', /CGNAT/],
    ['::1', /loopback/],
    ['fd12:3456::1', /ULA/],
    ['::ffff:127.0.0.1', /loopback/],
    ['::ffff:7f00:1', /loopback/],
    ['64:ff9b::808:808', /NAT64/],
    ['198.51.100.7', /TEST-NET-2/],
    ['203.0.113.9', /TEST-NET-3/],
  ]
  for (const [a, label] of priv) {
    const c = classifyAddress(a)
    assert.equal(c.floor, 'private', a)
    assert.match(specialRange(a) ?? '', label, a)
  }
  for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '93.184.216.34'])
    assert.equal(specialRange(a), undefined, a)
})

test('entry syntax: names, wildcards, IPs, CIDRs, ports and port lists; malformed entries are refused by the schema', () => {
  assert.deepEqual(parseEntry('Example.COM:443'), { kind: 'name', value: 'example.com', ports: [443] })
  assert.deepEqual(parseEntry('*.example.com:80,443'), {
    kind: 'subdomains',
    value: 'example.com',
    ports: [80, 443],
  })
  assert.equal(parseEntry('*')?.kind, 'any')
  assert.equal(parseEntry('10.0.0.0/8')?.kind, 'address')
  assert.deepEqual(parseEntry('[::1]:8080')?.ports, [8080])
  assert.equal(parseEntry('fd00::/8')?.kind, 'address')
  for (const bad of [
    'exa mple.com',
    'example.com:0',
    'example.com:99999',
    '10.0.0.0/33',
    '*.',
    'a..b',
    'x:y',
  ]) {
    assert.equal(parseEntry(bad), undefined, bad)
    assert.equal(NetworkPolicySchema.safeParse({ enabled: true, allow: [bad] }).success, false, bad)
  }
  assert.equal(
    NetworkPolicySchema.safeParse({ enabled: true, allow: [{ host: 'a.com', access: 'write' }] }).success,
    false,
  )
})

const policy = (allow: NetworkEntryInput[], deny: string[] = []) =>
  compilePolicy(NetworkPolicySchema.parse({ enabled: true, allow, deny }))
const allowed = (p: ReturnType<typeof policy>, req: Parameters<typeof evaluate>[1]) =>
  evaluate(p, req).allowed

test('decision order: specific deny > specific allow > * (deny first) > empty allow list; the floor on every address', () => {
  const p = policy(['example.com', '*'], ['bad.example.com', 'example.com:25'])
  assert.equal(allowed(p, { host: 'api.example.com', port: 443, address: '93.184.216.34' }), true)
  const deny = evaluate(p, { host: 'bad.example.com', port: 443, address: '93.184.216.34' })
  assert.equal(deny.allowed, false)
  assert.match(deny.reason, /refused by deny entry 'bad\.example\.com'/)
  assert.equal(allowed(p, { host: 'example.com', port: 25 }), false)
  assert.equal(allowed(p, { host: 'other.org', port: 443, address: '8.8.8.8' }), true, '* allows')
  assert.equal(
    allowed(policy(['a.com'], ['*']), { host: 'a.com', port: 1, address: '8.8.8.8' }),
    true,
    'specific allow beats deny *',
  )
  assert.equal(
    allowed(policy(['*'], ['*']), { host: 'a.com', port: 1, address: '8.8.8.8' }),
    false,
    'deny * beats allow *',
  )
  const empty = policy([])
  assert.equal(allowed(empty, { host: 'a.com', port: 443, address: '8.8.8.8' }), true)
  assert.equal(allowed(empty, { host: 'a.com', port: 443, address: '10.0.0.1' }), false)
  // *.x is subdomains only; x includes its subdomains
  assert.equal(allowed(policy(['*.x.org']), { host: 'x.org', port: 1 }), false)
  assert.equal(allowed(policy(['*.x.org']), { host: 'a.x.org', port: 1 }), true)
  assert.equal(allowed(policy(['x.org']), { host: 'a.x.org', port: 1 }), true)
  assert.equal(allowed(policy(['x.org']), { host: 'ax.org', port: 1 }), false)
  // private addresses only through an IP entry naming them; link-local never
  assert.equal(allowed(policy(['x.org']), { host: 'x.org', port: 1, address: '127.0.0.1' }), false)
  assert.equal(allowed(policy(['127.0.0.1']), { host: '127.0.0.1', port: 1, address: '127.0.0.1' }), true)
  assert.equal(
    allowed(policy(['10.0.0.0/8:443']), { host: '10.2.3.4', port: 443, address: '10.2.3.4' }),
    true,
  )
  assert.equal(
    allowed(policy(['10.0.0.0/8:443']), { host: '10.2.3.4', port: 80, address: '10.2.3.4' }),
    false,
  )
  assert.equal(
    allowed(policy(['169.254.0.0/16', '*']), {
      host: '169.254.169.254',
      port: 80,
      address: '169.254.169.254',
    }),
    false,
  )
  assert.match(
    evaluate(policy(['*']), { host: 'metadata.google.internal', port: 80 }).reason,
    /metadata name/,
  )
  assert.equal(
    evaluate(compilePolicy({ enabled: false, allow: [], deny: [] }), { host: 'a.com' }).allowed,
    false,
  )
})

test('per-host rules: read-only, none, method and path globs; tunnels cannot hide a narrowed method', () => {
  const p = policy([
    { host: 'ro.org', access: 'read-only' },
    { host: 'gone.org', access: 'none' },
    { host: 'api.org', methods: ['GET', 'POST'], paths: ['/v1/*'] },
    '*',
  ])
  const at = (host: string, method: string, path = '/') =>
    evaluate(p, { host, port: 80, method, path, address: '8.8.8.8' })
  assert.equal(at('ro.org', 'GET').allowed, true)
  assert.equal(at('ro.org', 'HEAD').allowed, true)
  assert.match(at('ro.org', 'POST').reason, /POST is not allowed by 'ro\.org \(read-only\)'/)
  assert.match(at('gone.org', 'GET').reason, /refused by deny entry 'gone\.org \(none\)'/)
  assert.equal(at('api.org', 'POST', '/v1/items?x=1').allowed, true)
  assert.match(at('api.org', 'POST', '/v2/items').reason, /path \/v2\/items is not allowed/)
  assert.match(at('api.org', 'DELETE', '/v1/x').reason, /DELETE is not allowed/)
  const tunnel = evaluate(p, { host: 'ro.org', port: 443, tunnel: true, address: '8.8.8.8' })
  assert.match(tunnel.reason, /which a tunnel .* does not show/)
  // the trace names every rule's verdict
  assert.deepEqual(
    at('ro.org', 'GET').trace.map((t) => `${t.list} ${t.entry}: ${t.verdict}`),
    [
      'deny gone.org (none): no match',
      'allow ro.org (read-only): matches: allow',
      'allow api.org (methods GET|POST, paths /v1/*): no match',
      'allow *: matches: allow',
    ],
  )
})

test('the server port and the egress relay port are never reachable on a local address', () => {
  const release = protectPort(40999)
  try {
    const p = policy(['*', '127.0.0.1'])
    assert.match(
      evaluate(p, { host: '127.0.0.1', port: 40999, address: '127.0.0.1' }).reason,
      /own listening port/,
    )
    assert.match(
      evaluate(p, { host: '127.0.0.1', port: 3128, address: '127.0.0.1' }).reason,
      /own listening port/,
    )
    assert.equal(evaluate(p, { host: '127.0.0.1', port: 41000, address: '127.0.0.1' }).allowed, true)
  } finally {
    release()
  }
  assert.equal(
    evaluate(policy(['127.0.0.1']), { host: '127.0.0.1', port: 40999, address: '127.0.0.1' }).allowed,
    true,
  )
})

async function loopbackServer(): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => res.end(`hello ${req.url}`))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  return { server, port: (server.address() as { port: number }).port }
}

function connectVia(socketPath: string, authority: string): Promise<{ status: number; message: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method: 'CONNECT', path: authority })
    req.on('connect', (res, socket) => {
      socket.destroy()
      resolve({ status: res.statusCode ?? 0, message: res.statusMessage ?? '' })
    })
    req.on('response', (res) => resolve({ status: res.statusCode ?? 0, message: res.statusMessage ?? '' }))
    req.on('error', reject)
    req.end()
  })
}

// A CONNECT tunnel the proxy accepted (200), as the raw socket beneath it.
function openTunnel(socketPath: string, authority: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method: 'CONNECT', path: authority })
    req.on('connect', (res, socket) =>
      res.statusCode === 200 ? resolve(socket) : reject(new Error(`CONNECT ${authority}: ${res.statusCode}`)),
    )
    req.on('response', (res) => reject(new Error(`CONNECT ${authority}: ${res.statusCode}`)))
    req.on('error', reject)
    req.end()
  })
}

function getVia(socketPath: string, url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get({ socketPath, path: url, headers: { host: new URL(url).host } }, (res) => {
      let body = ''
      res.on('data', (d) => {
        body += d
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    }).on('error', reject)
  })
}

test('the proxy refuses metadata, loopback names and numeric spellings, and says why in the status line', async () => {
  const { server, port } = await loopbackServer()
  const proxy = await startEgressProxy({ allow: [], deny: ['denied.example'] })
  try {
    assert.equal((await connectVia(proxy.socketPath, '169.254.169.254:80')).status, 403)
    assert.equal((await connectVia(proxy.socketPath, `localhost:${port}`)).status, 403)
    assert.equal((await connectVia(proxy.socketPath, `2130706433:${port}`)).status, 403)
    assert.equal((await connectVia(proxy.socketPath, `[::ffff:127.0.0.1]:${port}`)).status, 403)
    const denied = await connectVia(proxy.socketPath, 'denied.example:443')
    assert.equal(denied.status, 403)
    assert.match(denied.message, /refused by deny entry 'denied\.example'/)
    const r = await getVia(proxy.socketPath, `http://127.0.0.1:${port}/x`)
    assert.equal(r.status, 403)
    assert.match(r.body, /loopback/)
    assert.ok(proxy.decisions.every((d) => !d.allowed))
    assert.match(proxy.decisions[0]?.reason ?? '', /link-local/)
  } finally {
    await proxy.close()
    server.closeAllConnections()
    server.close()
  }
})

test("inet_aton's IPv4 forms are the address they name, as the OS and the URL parser read them", () => {
  const forms: [string, string | undefined][] = [
    ['2130706433', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['0x7f000001', '127.0.0.1'],
    ['2852039166', '169.254.169.254'],
    ['1.65536', '1.1.0.0'],
    ['203.0.113.7', '203.0.113.7'],
    ['256.1.1.1', undefined],
    ['1.2.3.256', undefined],
    ['4294967296', undefined],
    ['08.1.1.1', undefined],
    ['1.2.3.4.5', undefined],
    ['lab.test', undefined],
    ['1e3', undefined],
  ]
  for (const [form, want] of forms) assert.equal(canonicalIPv4(form), want, form)
  const listed = compilePolicy({ enabled: true, allow: ['127.0.0.1:8080'], deny: [] })
  for (const host of ['2130706433', '0x7f.1', '0177.0.0.1', '127.1']) {
    const v = evaluate(listed, { host, port: 8080, address: host, tunnel: true })
    assert.equal(v.allowed, true, host)
    assert.equal(v.rule, '127.0.0.1:8080')
    const other = evaluate(listed, { host, port: 9, address: host, tunnel: true })
    assert.equal(other.reason, '127.0.0.1:9 is not on the allow list (127.0.0.1:8080)')
  }
  const open = compilePolicy({ enabled: true, allow: [], deny: [] })
  assert.match(
    evaluate(open, { host: '2130706433', port: 80, address: '2130706433' }).reason,
    /^127\.0\.0\.1 \(loopback\): reachable only through an allow entry naming that IP or CIDR$/,
  )
  assert.match(
    evaluate(open, { host: '2852039166', port: 80, address: '2852039166' }).reason,
    /169\.254\.169\.254 \(link-local \(cloud metadata\)\): never reachable/,
  )
})

test('a tightening cuts the open tunnels the new rules refuse and keeps the others', async () => {
  const a = await loopbackServer()
  const b = await loopbackServer()
  const proxy = await startEgressProxy({ allow: ['127.0.0.1'], deny: [] })
  try {
    const held = await openTunnel(proxy.socketPath, `127.0.0.1:${a.port}`)
    const kept = await openTunnel(proxy.socketPath, `127.0.0.1:${b.port}`)
    const closed = (s: Socket) => new Promise<void>((r) => (s.destroyed ? r() : s.once('close', () => r())))
    proxy.setRules({ allow: [`127.0.0.1:${b.port}`], deny: [] })
    await closed(held)
    assert.equal(kept.destroyed, false)
    assert.ok(
      proxy.decisions.some(
        (d) =>
          !d.allowed &&
          d.reason === `cut: 127.0.0.1:${a.port} is not on the allow list (127.0.0.1:${b.port})`,
      ),
      JSON.stringify(proxy.decisions),
    )
    // The kept tunnel still carries a request both ways.
    kept.write(`GET /kept HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
    let reply = ''
    kept.on('data', (d: Buffer) => {
      reply += d
    })
    await closed(kept)
    assert.match(reply, /hello \/kept$/)
  } finally {
    await proxy.close()
    for (const s of [a, b]) {
      s.server.closeAllConnections()
      s.server.close()
    }
  }
})

test('an explicitly allowed address is dialled, by CONNECT and by absolute URI, through the forwarder; rules tighten live', async () => {
  const { server, port } = await loopbackServer()
  const proxy = await startEgressProxy({ allow: ['127.0.0.1'], deny: [] })
  const forwarder = await startEgressForwarder({ port: 0, socketPath: proxy.socketPath })
  try {
    assert.equal((await connectVia(proxy.socketPath, `127.0.0.1:${port}`)).status, 200)
    const direct = await getVia(proxy.socketPath, `http://127.0.0.1:${port}/direct`)
    assert.deepEqual(direct, { status: 200, body: 'hello /direct' })
    const viaForwarder = await new Promise<string>((resolve, reject) => {
      get({ host: '127.0.0.1', port: forwarder.port, path: `http://127.0.0.1:${port}/fwd` }, (res) => {
        let body = ''
        res.on('data', (d) => {
          body += d
        })
        res.on('end', () => resolve(body))
      }).on('error', reject)
    })
    assert.equal(viaForwarder, 'hello /fwd')
    assert.ok(proxy.decisions.some((d) => d.allowed && d.address === '127.0.0.1'))
    proxy.setRules({ allow: ['example.org'], deny: [] })
    assert.equal((await connectVia(proxy.socketPath, `127.0.0.1:${port}`)).status, 403)
  } finally {
    await forwarder.close()
    await proxy.close()
    server.closeAllConnections()
    server.close()
  }
})

test('vis doctor egress checks: the relay -> proxy path carries an allowed request and the floor holds', async () => {
  const checks = await egressChecks()
  assert.deepEqual(
    checks.map((c) => [c.id, c.level]),
    [
      ['egress.path', 'info'],
      ['egress.floor', 'info'],
    ],
  )
  assert.match(checks[0]?.message ?? '', /relay -> host proxy/)
})

test('the checker: refused names are never looked up, every answer is checked, the checked address is dialled', async () => {
  let lookups = 0
  const uninstall = installEgressLab({
    names: {
      'ok.test': ['8.8.8.8', '8.8.4.4'],
      'count.test': () => {
        lookups++
        return ['9.9.9.9']
      },
      'mix.test': ['8.8.8.8', '10.0.0.1'],
      'inner.test': ['10.1.1.1'],
    },
    publicRanges: [],
  })
  try {
    const c = new EgressChecker(policy(['ok.test', 'mix.test', '10.0.0.0/8'], ['*']))
    const ok = await c.check({ host: 'ok.test', port: 443, tunnel: true })
    assert.deepEqual(ok.allowed && [ok.address, ok.addresses], ['8.8.8.8', ['8.8.8.8', '8.8.4.4']])
    const off = await c.check({ host: 'count.test', port: 443 })
    assert.equal(off.allowed, false)
    assert.equal(lookups, 0, 'a name the lists refuse is never looked up')
    const mix = await c.check({ host: 'mix.test', port: 443 })
    assert.equal(mix.allowed, false)
    assert.match(mix.allowed ? '' : mix.reason, /mix\.test resolves to 10\.0\.0\.1 \(private \(RFC 1918\)\)/)
    // an IP/CIDR entry admits addresses, not names resolving into it (nor looks them up)
    assert.equal((await c.check({ host: 'inner.test', port: 80 })).allowed, false)
    assert.equal((await c.check({ host: '10.1.1.1', port: 80 })).allowed, true)
    // a bare address the guest got from a lookup is judged by the name that produced it
    const byName = new EgressChecker(policy(['ok.test:443']))
    assert.equal((await byName.check({ host: '8.8.4.4', port: 443 })).allowed, false)
    byName.remember('ok.test', ['8.8.4.4'])
    assert.equal((await byName.check({ host: '8.8.4.4', port: 443 })).allowed, true)
    assert.equal((await byName.check({ host: '8.8.4.4', port: 80 })).allowed, false)
  } finally {
    uninstall()
  }
})
