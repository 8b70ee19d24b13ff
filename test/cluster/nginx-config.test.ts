import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { createServer, request, type Server } from 'node:http'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { nginxConfig } from '../../src/cluster/nginx-config.js'
import { isVisError } from '../../src/util/errors.js'
import { freePort, type Nginx, nginxCheck, startNginx } from '../helpers/nginx.js'

// The generated configuration, checked by nginx itself and then run: real nginx in front of
// three loopback HTTP servers that answer who they are and what nginx sent them.

const vis = join(import.meta.dirname, '..', 'http', 'fixtures', 'vis.ts')

describe('vis cluster nginx-config', () => {
  it('prints a configuration nginx -t accepts', () => {
    const text = nginxConfig({
      listen: '127.0.0.1:18080',
      nodes: ['127.0.0.1:17001', 'localhost:17002', '[::1]:17003'],
      serverName: 'vis.example',
    })
    const check = nginxCheck(text)
    assert.ok(check.ok, check.output)
    assert.match(text, /hash \$vis_route consistent;/)
    assert.match(text, /server localhost:17002 max_fails=1 fail_timeout=5s;/)
    assert.match(text, /proxy_buffering off;/)
    assert.match(text, /proxy_next_upstream error timeout http_502 http_503;/)
    assert.doesNotMatch(text, /proxy_next_upstream [^;]*non_idempotent/)
  })

  it('the CLI prints it, and refuses bad flags naming each one', () => {
    const nginxConfigCli = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', vis, 'cluster', 'nginx-config', ...args], {
        encoding: 'utf8',
      })
    const ok = nginxConfigCli('--listen', '127.0.0.1:8080', '--node', '127.0.0.1:7001')
    assert.equal(ok.status, 0, ok.stderr)
    assert.match(ok.stdout, /upstream vis_nodes \{/)
    assert.match(ok.stdout, /listen 127\.0\.0\.1:8080;/)
    const bad = nginxConfigCli(
      ...[
        '--listen',
        '8080',
        '--node',
        'a:1',
        '--node',
        'a:1',
        '--node',
        'b:70000',
        '--server-name',
        'bad name',
      ],
    )
    assert.equal(bad.status, 2, 'a bad option value is a usage error')
    assert.equal(bad.stdout, '')
    assert.match(bad.stderr, /--listen: "8080" is not host:port/)
    assert.match(bad.stderr, /--node: --node a:1 is given twice/)
    assert.match(bad.stderr, /--node: "b:70000" is not host:port/)
    assert.match(bad.stderr, /--server-name: /)
    assert.match(bad.stderr, /\[cli\.bad-option\]/)
    const none = nginxConfigCli('--listen', '127.0.0.1:1')
    assert.equal(none.status, 2)
    assert.match(none.stderr, /at least one --node host:port is needed/)
  })

  it('throws VisError cli.bad-option from the library too', () => {
    assert.throws(
      () => nginxConfig({ listen: '127.0.0.1:80', nodes: [] }),
      (e) => isVisError(e, 'cli.bad-option') && /--node/.test(e.message),
    )
  })
})

describe('nginx running the generated configuration', () => {
  type Seen = { node: string; host?: string; forwardedFor?: string; connection?: string; upgrade?: string }
  const backends: { name: string; port: number; server: Server }[] = []
  let nginx: Nginx
  let base = ''

  before(async () => {
    for (const name of ['n1', 'n2', 'n3']) {
      const port = await freePort()
      const server = createServer((req, res) => {
        const seen: Seen = {
          node: name,
          host: req.headers.host,
          forwardedFor: req.headers['x-forwarded-for'] as string | undefined,
          connection: req.headers.connection,
          upgrade: req.headers.upgrade,
        }
        if (req.url?.endsWith('/events')) {
          // An event stream: the first frame must reach the client while the response is open.
          res.writeHead(200, { 'content-type': 'text/event-stream' })
          res.write(`data: ${JSON.stringify(seen)}\n\n`)
          req.on('close', () => res.end())
          return
        }
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify(seen))
      })
      await new Promise<void>((r) => server.listen(port, '127.0.0.1', r))
      backends.push({ name, port, server })
    }
    const listen = await freePort()
    nginx = await startNginx(
      nginxConfig({
        listen: `127.0.0.1:${listen}`,
        nodes: backends.map((b) => `127.0.0.1:${b.port}`),
        serverName: 'vis.example',
      }),
    )
    base = `http://127.0.0.1:${listen}`
  })

  after(async () => {
    await nginx?.stop()
    for (const b of backends) b.server.closeAllConnections()
    await Promise.all(backends.map((b) => new Promise((r) => b.server.close(r))))
  })

  // node:http, not fetch: fetch does not let a caller set Host.
  const get = (path: string): Promise<Seen> =>
    new Promise((resolve, reject) => {
      const req = request(`${base}${path}`, { headers: { host: 'vis.example:8443' } }, (res) => {
        let text = ''
        res.on('data', (d) => {
          text += d
        })
        res.on('end', () => {
          if (res.statusCode !== 200) reject(new Error(`${path}: ${res.statusCode} ${text}`))
          else resolve(JSON.parse(text) as Seen)
        })
      })
      req.on('error', reject)
      req.end()
    })

  it('sends every request of one session to one node, and spreads sessions', async () => {
    const owners = new Map<string, string>()
    for (let i = 0; i < 24; i++) {
      const id = `ses_${i.toString(16).padStart(4, '0')}routing`
      const paths = [`/v1/sessions/${id}`, `/v1/sessions/${id}/blocks`, `/v1/sessions/${id}/blocks/blk_1`]
      const nodes = new Set<string>()
      for (const p of paths) for (let k = 0; k < 2; k++) nodes.add((await get(p)).node)
      assert.equal(nodes.size, 1, `${id} went to ${[...nodes]}`)
      owners.set(id, [...nodes][0]!)
    }
    assert.equal(new Set(owners.values()).size, 3, 'the 24 sessions spread over all three nodes')
  })

  it('spreads requests about no session (creations) over the nodes', async () => {
    const nodes = new Set<string>()
    for (let i = 0; i < 40 && nodes.size < 3; i++) nodes.add((await get('/v1/sessions')).node)
    assert.equal(nodes.size, 3)
  })

  it('passes the client Host and X-Forwarded-For, and keeps upstream connections alive', async () => {
    const seen = await get('/v1/sessions/ses_headers')
    assert.equal(seen.host, 'vis.example:8443')
    assert.equal(seen.forwardedFor, '127.0.0.1')
    assert.equal(seen.upgrade, undefined)
    assert.notEqual(seen.connection, 'close')
  })

  it('streams an event stream unbuffered', async () => {
    const ac = new AbortController()
    const res = await fetch(`${base}/v1/sessions/ses_sse/events`, { signal: ac.signal })
    const reader = res.body!.getReader()
    const { value } = await reader.read()
    assert.match(new TextDecoder().decode(value), /^data: \{"node":"n\d"/)
    ac.abort()
  })

  it("moves a dead node's sessions to one other node and back", async () => {
    const ids = Array.from({ length: 30 }, (_, i) => `ses_${i}moving`)
    const before = new Map<string, string>()
    for (const id of ids) before.set(id, (await get(`/v1/sessions/${id}`)).node)
    const victim = backends[0]!
    const onVictim = ids.filter((id) => before.get(id) === victim.name)
    assert.ok(onVictim.length > 0)
    victim.server.closeAllConnections()
    await new Promise((r) => victim.server.close(r))
    for (const id of ids) {
      const now = (await get(`/v1/sessions/${id}`)).node
      if (before.get(id) === victim.name) assert.notEqual(now, victim.name)
      // Consistent hashing: sessions of the living nodes stay where they were.
      else assert.equal(now, before.get(id), `${id} moved although its node lives`)
      // ... and a moved session stays on its new node.
      assert.equal((await get(`/v1/sessions/${id}/blocks`)).node, now)
    }
  })
})
