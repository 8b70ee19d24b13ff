import assert from 'node:assert/strict'
import { createServer, get, request, type Server } from 'node:http'
import { test } from 'node:test'
import { specialRange } from '../../src/confinement/egress/address.js'
import { startEgressForwarder } from '../../src/confinement/egress/forwarder.js'
import { startEgressProxy } from '../../src/confinement/egress/proxy.js'
import { checkAddress, checkHost } from '../../src/confinement/egress/rules.js'

test('special address ranges are classified, public ones are not', () => {
  const special: [string, string][] = [
    ['169.254.169.254', 'link-local'],
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'CGNAT'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'ULA'],
    ['fd12:3456::1', 'ULA'],
    ['fe80::1', 'link-local'],
    ['::ffff:127.0.0.1', 'IPv4-mapped'],
    ['::ffff:169.254.169.254', 'IPv4-mapped'],
    ['64:ff9b::a9fe:a9fe', 'NAT64'],
    ['ff02::1', 'multicast'],
  ]
  for (const [address, label] of special) assert.equal(specialRange(address), label, address)
  for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '93.184.216.34']) {
    assert.equal(specialRange(address), undefined, address)
  }
})

test('allow and deny lists: host patterns, CIDRs, explicit allowance of special addresses', () => {
  const open = { allow: [], deny: ['*.bad.example', '203.0.113.0/24'] }
  assert.equal(checkHost(open, 'x.bad.example').ok, false)
  assert.equal(checkHost(open, 'good.example').ok, true)
  assert.equal(checkAddress(open, 'good.example', '8.8.8.8').ok, true)
  assert.equal(checkAddress(open, 'good.example', '127.0.0.1').ok, false)
  const listed = { allow: ['api.example.com', '127.0.0.1'], deny: [] }
  assert.equal(checkHost(listed, 'other.example.com').ok, true) // an IP entry defers to the address check
  assert.equal(checkAddress(listed, 'other.example.com', '8.8.8.8').ok, false)
  assert.equal(checkAddress(listed, 'api.example.com', '8.8.8.8').ok, true)
  assert.equal(checkAddress(listed, 'localhost', '127.0.0.1').ok, true)
  assert.equal(checkAddress(listed, 'localhost', '127.0.0.2').ok, false)
  const names = { allow: ['*.example.com'], deny: [] }
  assert.equal(checkHost(names, 'a.example.com').ok, true)
  assert.equal(checkHost(names, 'example.org').ok, false)
})

async function loopbackServer(): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => res.end(`hello ${req.url}`))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  return { server, port: (server.address() as { port: number }).port }
}

function connectVia(socketPath: string, authority: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method: 'CONNECT', path: authority })
    req.on('connect', (res, socket) => {
      socket.destroy()
      resolve(res.statusCode ?? 0)
    })
    req.on('response', (res) => resolve(res.statusCode ?? 0))
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

test('the proxy refuses metadata, loopback names and numeric spellings, and records why', async () => {
  const { server, port } = await loopbackServer()
  const proxy = await startEgressProxy({ allow: [], deny: ['denied.example'] })
  try {
    assert.equal(await connectVia(proxy.socketPath, '169.254.169.254:80'), 403)
    assert.equal(await connectVia(proxy.socketPath, `localhost:${port}`), 403)
    assert.equal(await connectVia(proxy.socketPath, `2130706433:${port}`), 403)
    assert.equal(await connectVia(proxy.socketPath, `[::ffff:127.0.0.1]:${port}`), 403)
    assert.equal(await connectVia(proxy.socketPath, 'denied.example:443'), 403)
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

test('an explicitly allowed address is dialled, by CONNECT and by absolute URI, through the forwarder', async () => {
  const { server, port } = await loopbackServer()
  const proxy = await startEgressProxy({ allow: ['127.0.0.1'], deny: [] })
  const forwarder = await startEgressForwarder({ port: 0, socketPath: proxy.socketPath })
  try {
    assert.equal(await connectVia(proxy.socketPath, `127.0.0.1:${port}`), 200)
    const direct = await getVia(proxy.socketPath, `http://127.0.0.1:${port}/direct`)
    assert.deepEqual(direct, { status: 200, body: 'hello /direct' })
    // through the loopback forwarder, as a sandboxed client using HTTP_PROXY would
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
  } finally {
    await forwarder.close()
    await proxy.close()
    server.closeAllConnections()
    server.close()
  }
})
