import { lookup } from 'node:dns/promises'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage, request, type Server } from 'node:http'
import { connect, isIP, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { checkAddress, checkHost, type EgressRules } from './rules.js'

export type EgressDecision = {
  host: string
  port: number
  address?: string
  allowed: boolean
  reason?: string
}

export type EgressProxy = {
  dir: string // bind-mounted into the sandbox; holds `egress.sock`
  socketPath: string
  decisions: EgressDecision[]
  close(): Promise<void>
}

const MAX_DECISIONS = 1000

// Resolves the name itself and returns the one address it checked, so the
// connection goes exactly where the check looked (no second lookup to rebind).
async function resolveChecked(
  rules: EgressRules,
  host: string,
): Promise<{ address: string } | { reason: string }> {
  const byName = checkHost(rules, host)
  if (!byName.ok) return { reason: byName.reason }
  let addresses: string[]
  try {
    const bare = host.replace(/^\[(.*)\]$/, '$1')
    addresses = isIP(bare)
      ? [bare]
      : (await lookup(bare, { all: true, verbatim: true })).map((a) => a.address)
  } catch (err) {
    return { reason: `cannot resolve ${host}: ${(err as NodeJS.ErrnoException).code ?? err}` }
  }
  if (addresses.length === 0) return { reason: `${host} has no addresses` }
  // Refuse when any answer is forbidden: a name that mixes public and private answers is an attack.
  for (const a of addresses) {
    const v = checkAddress(rules, host, a)
    if (!v.ok) return { reason: v.reason }
  }
  return { address: addresses[0] as string }
}

function splitHostPort(authority: string, defaultPort: number): { host: string; port: number } | undefined {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(authority)
  if (!m) return undefined
  const port = m[2] ? Number(m[2]) : defaultPort
  if (!(port > 0 && port < 65536)) return undefined
  return { host: (m[1] ?? '').replace(/^\[(.*)\]$/, '$1'), port }
}

const HOP_BY_HOP = new Set([
  'proxy-authorization',
  'proxy-connection',
  'connection',
  'keep-alive',
  'te',
  'upgrade',
  'trailer',
])

// The host side of egress: an HTTP proxy on a unix socket (CONNECT for HTTPS,
// absolute URIs for plain HTTP). It is the sandbox's only way off its network namespace.
export async function startEgressProxy(
  rules: EgressRules,
  options: { onDecision?: (d: EgressDecision) => void } = {},
): Promise<EgressProxy> {
  const dir = mkdtempSync(join(tmpdir(), 'vis-egress-'))
  const socketPath = join(dir, 'egress.sock')
  const decisions: EgressDecision[] = []
  const record = (d: EgressDecision) => {
    if (decisions.length < MAX_DECISIONS) decisions.push(d)
    options.onDecision?.(d)
  }
  const sockets = new Set<Socket>()

  const server: Server = createServer(async (req, res) => {
    let url: URL
    try {
      url = new URL(req.url ?? '')
    } catch {
      res.writeHead(400).end('vis egress: only absolute http:// URIs (or CONNECT) are accepted\n')
      return
    }
    if (url.protocol !== 'http:') {
      res.writeHead(400).end('vis egress: use CONNECT for https\n')
      return
    }
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
    const port = url.port ? Number(url.port) : 80
    const checked = await resolveChecked(rules, host)
    if ('reason' in checked) {
      record({ host, port, allowed: false, reason: checked.reason })
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`vis egress refused: ${checked.reason}\n`)
      return
    }
    record({ host, port, address: checked.address, allowed: true })
    const headers: Record<string, string | string[]> = {}
    for (const [k, v] of Object.entries(req.headers))
      if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v
    const upstream = request(
      {
        host: checked.address,
        port,
        method: req.method,
        path: url.pathname + url.search,
        headers,
        setHost: false,
      },
      (up: IncomingMessage) => {
        res.writeHead(up.statusCode ?? 502, up.headers)
        up.pipe(res)
      },
    )
    upstream.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502).end(`vis egress: upstream error ${err.message}\n`)
      else res.destroy()
    })
    req.pipe(upstream)
  })

  server.on('connect', async (req: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client)
    client.on('close', () => sockets.delete(client))
    client.on('error', () => client.destroy())
    const target = splitHostPort(req.url ?? '', 443)
    if (!target) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n')
      return
    }
    const checked = await resolveChecked(rules, target.host)
    if ('reason' in checked) {
      record({ ...target, allowed: false, reason: checked.reason })
      client.end(
        `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\nvis egress refused: ${checked.reason}\n`,
      )
      return
    }
    record({ ...target, address: checked.address, allowed: true })
    const upstream = connect({ host: checked.address, port: target.port })
    sockets.add(upstream)
    upstream.on('close', () => sockets.delete(upstream))
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      if (head.length) upstream.write(head)
      upstream.pipe(client)
      client.pipe(upstream)
    })
    upstream.on('error', () => {
      if (client.writable) client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n')
      client.destroy()
    })
  })
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(socketPath, () => resolve())
  })

  return {
    dir,
    socketPath,
    decisions,
    async close() {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
