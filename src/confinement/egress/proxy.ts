import { rmSync } from 'node:fs'
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { z } from 'zod'
import { type NetworkEntry, NetworkPolicySchema } from '../../contracts/network-policy.js'
import { makeHostStateDir } from '../../util/host-state-dirs.js'
import { EgressChecker } from './check.js'
import { type CompiledPolicy, compilePolicy, type EgressRequest, type RuleVerdict } from './evaluate.js'
import { LINGER_MS, lingerAfterAnswers, lingeringClose } from './linger.js'
import { OpenConnections } from './open-connections.js'
import { relaySockets } from './relay.js'

export type EgressDecision = {
  host: string
  port: number
  address?: string
  allowed: boolean
  reason?: string
}

export type EgressRules = { enabled?: boolean; allow: NetworkEntry[]; deny: NetworkEntry[] }

export type EgressProxy = {
  dir: string // bind-mounted into the sandbox; holds `egress.sock`
  socketPath: string
  decisions: EgressDecision[]
  // Tightens (or sets) the policy for new connections and lookups.
  setRules(rules: EgressRules): void
  close(): Promise<void>
}

const MAX_DECISIONS = 1000

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

// The refusal travels in the status line too, so clients that show only the status
// (urllib's HTTPError, http.client's "Tunnel connection failed") still name the rule.
const statusLine = (text: string) => text.replace(/[^\x20-\x7e]/g, '?').slice(0, 400)
const statusText = (reason: string) => statusLine(`vis egress refused: ${reason}`)

const ControlQuery = z.object({
  host: z.string().min(1).max(300),
  port: z.coerce.number().int().min(1).max(65535).optional(),
})
const ProbeQuery = z.object({
  target: z.string().min(1).max(2000),
  method: z.string().max(20).default('GET'),
})

// A synthetic request from network_probe's argument: a URL, or host[:port].
function probeTarget(target: string, method: string): EgressRequest | undefined {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) {
    let url: URL
    try {
      url = new URL(target)
    } catch {
      return undefined
    }
    const https = url.protocol === 'https:'
    const port = url.port ? Number(url.port) : https ? 443 : 80
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
    if (url.protocol === 'http:') return { host, port, method, path: url.pathname + url.search }
    return { host, port, tunnel: true }
  }
  const hp = splitHostPort(target, 443)
  return hp ? { ...hp, tunnel: true } : undefined
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  res
    .writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      connection: 'close',
    })
    .end(text)
}

// The host side of egress: an HTTP proxy on a unix socket (CONNECT for HTTPS and raw
// TCP, absolute URIs for plain HTTP), plus the guest's lookup and probe endpoints
// (`/.vis/resolve`, `/.vis/probe`). It is the sandbox's only way off its network namespace.
export async function startEgressProxy(
  rules: EgressRules,
  options: { onDecision?: (d: EgressDecision) => void; lingerMs?: number } = {},
): Promise<EgressProxy> {
  const lingerMs = options.lingerMs ?? LINGER_MS
  // A tunnel's own answer (a refusal, a 502): the client may still be sending; see linger.ts.
  const answerTunnel = (client: Socket, text: string) => {
    client.write(text)
    lingeringClose(client, lingerMs)
  }
  const compileRules = (r: EgressRules): CompiledPolicy =>
    compilePolicy(NetworkPolicySchema.parse({ ...r, enabled: r.enabled ?? true }))
  const checker = new EgressChecker(compileRules(rules))
  const dir = makeHostStateDir('vis-egress-')
  const socketPath = join(dir, 'egress.sock')
  const decisions: EgressDecision[] = []
  const record = (d: EgressDecision) => {
    if (decisions.length < MAX_DECISIONS) decisions.push(d)
    options.onDecision?.(d)
  }
  const sockets = new Set<Socket>()
  const open = new OpenConnections()

  async function control(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://vis-egress')
    const query = Object.fromEntries(url.searchParams)
    if (url.pathname === '/.vis/resolve') {
      const q = ControlQuery.safeParse(query)
      if (!q.success)
        return json(res, 400, { ok: false, reason: 'resolve needs host (and an optional port)' })
      const checked = await checker.check({ host: q.data.host, port: q.data.port })
      record({
        host: q.data.host,
        port: q.data.port ?? 0,
        allowed: checked.allowed,
        ...(checked.allowed ? { address: checked.address } : { reason: checked.reason }),
      })
      if (!checked.allowed) return json(res, 200, { ok: false, reason: checked.reason })
      checker.remember(q.data.host, checked.addresses)
      return json(res, 200, { ok: true, addresses: checked.addresses, rule: checked.verdict.rule ?? null })
    }
    if (url.pathname === '/.vis/probe') {
      const q = ProbeQuery.safeParse(query)
      const target = q.success ? probeTarget(q.data.target, q.data.method.toUpperCase()) : undefined
      if (!q.success || !target)
        return json(res, 400, { ok: false, reason: 'probe needs a URL or host:port' })
      const checked = await checker.check(target)
      const trace: RuleVerdict[] = checked.verdict.trace
      return json(res, 200, {
        ok: true,
        target: q.data.target,
        host: target.host,
        port: target.port,
        method: target.tunnel ? null : (target.method ?? null),
        tunnel: target.tunnel === true,
        addresses: checked.addresses ?? [],
        trace,
        allowed: checked.allowed,
        reason: checked.allowed ? checked.verdict.reason : checked.reason,
      })
    }
    return json(res, 404, { ok: false, reason: `no such egress endpoint ${url.pathname}` })
  }

  const server: Server = createServer(async (req, res) => {
    if ((req.url ?? '').startsWith('/.vis/')) {
      await control(req, res).catch((err) => json(res, 500, { ok: false, reason: String(err) }))
      return
    }
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
    const checked = await checker.check({
      host,
      port,
      method: req.method ?? 'GET',
      path: url.pathname + url.search,
    })
    if (!checked.allowed) {
      record({ host, port, allowed: false, reason: checked.reason })
      res
        .writeHead(403, statusText(checked.reason), { 'content-type': 'text/plain' })
        .end(`vis egress refused: ${checked.reason}\n`)
      return
    }
    record({ host, port, address: checked.address, allowed: true })
    const forget = open.add({
      request: { host, port, method: req.method ?? 'GET', path: url.pathname + url.search },
      address: checked.address,
      cut: () => {
        upstream.destroy()
        res.destroy()
      },
    })
    res.once('close', forget)
    const headers: Record<string, string | string[]> = {}
    for (const [k, v] of Object.entries(req.headers))
      if (v !== undefined && !HOP_BY_HOP.has(k) && k !== 'host') headers[k] = v
    // The authority judged is the one the destination sees: a proxy replaces the client's Host
    // with the absolute URI's (RFC 9112 §3.2.2), so a Host naming another virtual host than the
    // one the rules allowed never arrives.
    headers.host = url.host
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
      // The status line names the error too: urllib's HTTPError shows only that line.
      const at = checked.address.includes(':') ? `[${checked.address}]` : checked.address
      const text = `vis egress: upstream ${at}:${port} error ${err.message}`
      if (!res.headersSent)
        res.writeHead(502, statusLine(text), { 'content-type': 'text/plain' }).end(`${text}\n`)
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
      answerTunnel(client, 'HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n')
      return
    }
    const checked = await checker.check({ ...target, tunnel: true })
    if (!checked.allowed) {
      record({ ...target, allowed: false, reason: checked.reason })
      const body = `vis egress refused: ${checked.reason}\n`
      answerTunnel(
        client,
        `HTTP/1.1 403 ${statusText(checked.reason)}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      )
      return
    }
    record({ ...target, address: checked.address, allowed: true })
    // Half-open: the relay ends each side itself, after flushing what it relayed there.
    const upstream = connect({ host: checked.address, port: target.port, allowHalfOpen: true })
    sockets.add(upstream)
    upstream.on('close', () => sockets.delete(upstream))
    let connected = false
    upstream.once('connect', () => {
      connected = true
      upstream.setNoDelay(true)
      client.setNoDelay(true)
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      if (head.length) upstream.write(head)
      // A target that answers and closes while the client still sends must not have its
      // answer reset away; the relay flushes, drains and bounds (see relay.ts).
      const relay = relaySockets(client, upstream)
      const forget = open.add({
        request: { ...target, tunnel: true },
        address: checked.address,
        cut: relay.cut,
      })
      upstream.once('close', forget)
    })
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      if (connected) return // the relay cuts both sides

      const body = `vis egress: ${target.host}:${target.port} (${checked.address}): ${err.code ?? err.message}\n`
      if (client.writable)
        answerTunnel(
          client,
          `HTTP/1.1 502 ${err.code ?? 'Bad Gateway'}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        )
      else client.destroy()
    })
  })
  // Every answer the proxy ends a connection with is followed by a lingering close, so a
  // client still sending its request (a body the proxy refused unread) gets that answer.
  lingerAfterAnswers(server, lingerMs)
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
    setRules(next) {
      checker.policy = compileRules(next)
      for (const { connection, reason } of open.cutRefused((c) => checker.recheck(c.request, c.address))) {
        const { host, port } = connection.request
        record({
          host,
          port: port ?? 0,
          address: connection.address,
          allowed: false,
          reason: `cut: ${reason}`,
        })
      }
    },
    async close() {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
