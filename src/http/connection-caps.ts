import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { BlockList, isIP, type Socket } from 'node:net'
import { type ErrorCode, VisError } from '../util/errors.js'
import { errorAnswer } from './errors.js'
import { answerAndClose, rawErrorReply } from './raw-reply.js'

// Caps on what clients may hold open: connections in total, and per peer, so that one client
// (slow or hostile) cannot take every socket the process has. A peer is the connection's
// address, except behind a configured trusted proxy (nginx in front of a cluster): there the
// proxy's own connections count only in the total, and each request it forwards counts, while
// it is answered, for the client X-Forwarded-For names: the rightmost address in it that is not
// itself a trusted proxy (what the proxy appended, which the client cannot forge). Anyone
// else's X-Forwarded-For is ignored. Over a cap: 503 with its code, and Retry-After.

export const DEFAULT_MAX_CONNECTIONS = 1024
export const DEFAULT_MAX_CONNECTIONS_PER_PEER = 256

export type ConnectionCapOptions = {
  // Connections open at once, in total (default 1024).
  maxConnections?: number
  // Connections open at once from one peer, or requests in flight for one client behind a
  // trusted proxy (default 256).
  maxConnectionsPerPeer?: number
  // Proxies (IP addresses or CIDR ranges) whose X-Forwarded-For names the peer.
  trustedProxies?: readonly string[]
}

// `::ffff:10.0.0.1` (an IPv4 client on a dual-stack socket) is 10.0.0.1.
const plainAddress = (address: string | undefined) => (address ?? '').replace(/^::ffff:(?=\d+\.)/i, '')

export function trustedProxyList(entries: readonly string[]): BlockList {
  const list = new BlockList()
  for (const entry of entries) {
    const [address = '', bits] = entry.trim().split('/')
    const family = isIP(address)
    const prefix = bits === undefined ? undefined : Number(bits)
    const max = family === 6 ? 128 : 32
    if (
      family === 0 ||
      (prefix !== undefined && !(Number.isInteger(prefix) && prefix >= 0 && prefix <= max))
    ) {
      throw new VisError(
        'http.bad-trusted-proxy',
        `A trusted proxy is an IP address or a CIDR range (10.0.0.5, 10.0.0.0/24, fd00::/8), not ${JSON.stringify(entry)}.`,
        { trustedProxy: entry },
      )
    }
    const type = family === 6 ? 'ipv6' : 'ipv4'
    if (prefix === undefined) list.addAddress(address, type)
    else list.addSubnet(address, prefix, type)
  }
  return list
}

function positiveInt(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 1) {
    throw new VisError('http.bad-option', `${name} must be a positive integer, not ${value}.`, {
      [name]: value,
    })
  }
  return value
}

export type ConnectionCaps = {
  // False when the request was answered here (503, or a connection already refused).
  admit(req: IncomingMessage, res: ServerResponse): boolean
}

export type ConnectionCapSettings = {
  max: number
  perPeer: number
  isTrusted: (address: string) => boolean
}

// The options checked (a cap of 0, a proxy that is not an address: refused before anything starts).
export function connectionCapSettings(opts: ConnectionCapOptions = {}): ConnectionCapSettings {
  const max = positiveInt('maxConnections', opts.maxConnections, DEFAULT_MAX_CONNECTIONS)
  const perPeer = positiveInt(
    'maxConnectionsPerPeer',
    opts.maxConnectionsPerPeer,
    DEFAULT_MAX_CONNECTIONS_PER_PEER,
  )
  const entries = opts.trustedProxies ?? []
  const trusted = trustedProxyList(entries)
  const isTrusted = (address: string) => {
    const family = isIP(address)
    return entries.length > 0 && family !== 0 && trusted.check(address, family === 6 ? 'ipv6' : 'ipv4')
  }
  return { max, perPeer, isTrusted }
}

export function capConnections(server: Server, settings: ConnectionCapSettings): ConnectionCaps {
  const { max, perPeer, isTrusted } = settings
  const refused = new WeakSet<Socket>()
  const byPeer = new Map<string, number>()
  const inFlight = new Map<string, number>()
  let total = 0
  const dec = (map: Map<string, number>, key: string) => {
    const n = (map.get(key) ?? 1) - 1
    if (n === 0) map.delete(key)
    else map.set(key, n)
  }

  // Before Node's own listener sets the connection up: a refused one never reaches a route.
  server.prependListener('connection', (socket: Socket) => {
    const peer = plainAddress(socket.remoteAddress)
    const proxy = isTrusted(peer)
    total++
    if (!proxy) byPeer.set(peer, (byPeer.get(peer) ?? 0) + 1)
    socket.once('close', () => {
      total--
      if (!proxy) dec(byPeer, peer)
    })
    if (total > max) refuse(socket, totalReply(max))
    else if (!proxy && byPeer.get(peer)! > perPeer) refuse(socket, peerReply(perPeer, peer))
  })

  const refuse = (socket: Socket, reply: string) => {
    refused.add(socket)
    answerAndClose(socket, reply)
  }

  return {
    admit(req, res) {
      if (refused.has(req.socket)) return false
      const proxy = plainAddress(req.socket.remoteAddress)
      if (!isTrusted(proxy)) return true
      const client = forwardedClient(req.headers['x-forwarded-for'], proxy, isTrusted)
      const n = (inFlight.get(client) ?? 0) + 1
      if (n > perPeer) {
        const { status, json } = errorAnswer(...peerError(perPeer, client))
        const body = JSON.stringify(json)
        res.writeHead(status, {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
          'Retry-After': RETRY_AFTER,
        })
        res.end(body)
        return false
      }
      inFlight.set(client, n)
      res.once('close', () => dec(inFlight, client))
      return true
    },
  }
}

// The client a trusted proxy forwarded for: X-Forwarded-For read from the right, past the
// trusted proxies (a chain of them); without the header, the proxy itself.
function forwardedClient(
  header: string | string[] | undefined,
  proxy: string,
  isTrusted: (address: string) => boolean,
): string {
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((h) => plainAddress(h.trim()))
    .filter((h) => h !== '')
  for (let i = hops.length - 1; i >= 0; i--) if (!isTrusted(hops[i]!)) return hops[i]!
  return hops[0] ?? proxy
}

const RETRY_AFTER = '1'

function peerError(limit: number, peer: string): [ErrorCode, string, Record<string, unknown>] {
  return [
    'http.too-many-peer-connections',
    `${peer} already holds ${limit} connections (or requests) to this server, its limit: close some, ` +
      'or raise --max-connections-per-peer.',
    { limit, peer },
  ]
}

const totalReply = (limit: number) =>
  rawErrorReply(
    'http.too-many-connections',
    `This server holds ${limit} connections, its limit: retry shortly, or raise --max-connections.`,
    { limit },
    { 'Retry-After': RETRY_AFTER },
  )

const peerReply = (limit: number, peer: string) =>
  rawErrorReply(...peerError(limit, peer), { 'Retry-After': RETRY_AFTER })
