import { randomBytes } from 'node:crypto'
import { isAbsolute, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { clusterOptionsFrom } from '../../cluster/start.js'
import { explainLocally } from '../../distribution/resolve.js'
import { loadMcpConfig } from '../../engine/mcp-config.js'
import { untrustedNotices } from '../../extensions/trust.js'
import { isLoopbackHost } from '../../http/auth.js'
import {
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_CONNECTIONS_PER_PEER,
  trustedProxyList,
} from '../../http/connection-caps.js'
import { DEFAULT_BODY_TIMEOUT_MS } from '../../http/request-bodies.js'
import { DEFAULT_HOST, DEFAULT_PORT, startServer } from '../../http/server.js'
import { VisError } from '../../util/errors.js'
import { visibleControls } from '../agent/visible.js'
import type { Command } from '../command.js'

const usage = `Usage: vis serve [--host ${DEFAULT_HOST}] [--port ${DEFAULT_PORT}] [--pool N] [--python 3.X] [--project DIR]
                 [--no-token] [--allow-host NAME]... [--cors-origin URL]... [--allow-root DIR]...
                 [--body-timeout-ms N] [--max-connections N] [--max-connections-per-peer N]
                 [--trusted-proxy ADDR]...
                 [--node-id ID --advertise URL [--lease-ms N]]

Serve the HTTP API and the session page: sessions, blocks, live events (SSE), attachments,
doctor, metrics. State lives in SQLite under the vis home (VIS_HOME or ~/.vis), or in PostgreSQL
when VIS_DATABASE_URL=postgres://user@host:port/db is set; sessions survive a restart.

Like Jupyter, every request needs a token: VIS_TOKEN when set, otherwise a random one made at
start. The printed URL carries it; opening it in a browser keeps it in that page's localStorage (per port).
Clients send Authorization: Bearer <token>.

  --host         address to bind (default ${DEFAULT_HOST}). Any non-loopback address needs
                 VIS_TOKEN set to a bearer token of at least 16 characters, or vis refuses to start.
  --port         port (default ${DEFAULT_PORT}; 0 picks a free one)
  --pool         warm workers kept per policy (default 1)
  --python       the Python minor to run, e.g. 3.12 (default: the resolved one)
  --project      the project (default: the current directory): its .vis/extensions load beside
                 ~/.vis/extensions, and its declared import roots (pyproject.toml, setup.cfg...)
                 start the sys.path of sessions whose roots contain them
  --no-token     no token at all (loopback only): any local program or user may run code
  --allow-host   a host name the server answers to besides loopback ones (behind a proxy);
                 repeatable. Requests naming another Host get 421 (DNS rebinding).
  --cors-origin  a web origin (http://host:port) allowed to call the API from a browser;
                 repeatable. Requests from other pages get 403.
  --allow-root   a directory inside which API clients may open session roots; repeatable
                 (default: VIS_ALLOW_ROOTS, colon-separated; neither: any directory). A root
                 elsewhere gets 400 policy.root-not-allowed. Whatever the list, roots in /proc,
                 /sys, /dev, /run or inside the vis home are refused. MCP clients at /mcp are
                 bounded by mcp.json's serve.roots instead.

Slow or hostile clients (SECURITY.md):
  --body-timeout-ms          how long a request body may take after its headers (default
                             ${DEFAULT_BODY_TIMEOUT_MS}); later: 408 and the connection closes. A block's own
                             wait for its outcome is not bounded by it.
  --max-connections          connections open at once, in total (default ${DEFAULT_MAX_CONNECTIONS}); more: 503
  --max-connections-per-peer connections open at once from one address (default ${DEFAULT_MAX_CONNECTIONS_PER_PEER});
                             more: 503. Behind a trusted proxy: requests in flight per client.
  --trusted-proxy            a proxy (address or CIDR range) whose X-Forwarded-For names the
                             client, e.g. nginx in front of a cluster (and the other nodes,
                             which forward requests); repeatable. Others' X-Forwarded-For is
                             ignored.

Cluster mode (docs/cluster.md): several nodes share one PostgreSQL store (VIS_DATABASE_URL)
behind nginx (\`vis cluster nginx-config\`); each session runs on the node holding its lease.
  --node-id      this node's name, unique in the cluster (VIS_NODE_ID)
  --advertise    the URL other nodes reach this one at, e.g. http://10.0.0.11:7878 (VIS_NODE_URL)
  --lease-ms     how long a session's lease lasts unrenewed (VIS_LEASE_MS; default 10000): a
                 dead node's sessions move after at most this long

The OpenAPI document is served at /v1/openapi.json. SIGINT or SIGTERM stops cleanly.`

// A flag that takes a positive integer; undefined when not given.
function positiveOption(values: Record<string, unknown>, name: string): number | undefined {
  const raw = values[name]
  if (raw === undefined) return undefined
  const n = Number(raw)
  if (!/^\d+$/.test(String(raw)) || !Number.isSafeInteger(n) || n < 1) {
    throw new VisError('cli.bad-option', `--${name} must be a positive integer, not ${String(raw)}`)
  }
  return n
}

export const serve: Command = {
  name: 'serve',
  usage,
  async run(argv) {
    const { values } = parseArgs({
      args: argv,
      options: {
        host: { type: 'string', default: DEFAULT_HOST },
        port: { type: 'string', default: String(DEFAULT_PORT) },
        pool: { type: 'string' },
        python: { type: 'string' },
        project: { type: 'string' },
        'no-token': { type: 'boolean', default: false },
        'allow-host': { type: 'string', multiple: true, default: [] },
        'cors-origin': { type: 'string', multiple: true, default: [] },
        'body-timeout-ms': { type: 'string' },
        'max-connections': { type: 'string' },
        'max-connections-per-peer': { type: 'string' },
        'trusted-proxy': { type: 'string', multiple: true, default: [] },
        'allow-root': { type: 'string', multiple: true, default: [] },
        'node-id': { type: 'string' },
        advertise: { type: 'string' },
        'lease-ms': { type: 'string' },
      },
    })
    const cluster = clusterOptionsFrom(values)
    const port = Number(values.port)
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new VisError('cli.bad-option', `--port must be 0..65535, not ${values.port}`)
    }
    const pool = values.pool === undefined ? undefined : Number(values.pool)
    if (pool !== undefined && (!Number.isInteger(pool) || pool < 0 || pool > 64)) {
      throw new VisError('cli.bad-option', `--pool must be 0..64, not ${values.pool}`)
    }
    const bodyTimeoutMs = positiveOption(values, 'body-timeout-ms')
    const maxConnections = positiveOption(values, 'max-connections')
    const maxConnectionsPerPeer = positiveOption(values, 'max-connections-per-peer')
    try {
      trustedProxyList(values['trusted-proxy'])
    } catch (err) {
      throw new VisError('cli.bad-option', `--trusted-proxy: ${(err as Error).message}`)
    }
    for (const o of values['cors-origin']) {
      if (!/^https?:\/\/[^/]+$/i.test(o)) {
        throw new VisError('cli.bad-option', `--cors-origin takes an origin like http://host:port, not ${o}`)
      }
    }
    const allowRoots = allowRootsFrom(values['allow-root'], process.env.VIS_ALLOW_ROOTS)
    const configured = process.env.VIS_TOKEN || undefined
    const noToken = values['no-token']
    if (noToken && !isLoopbackHost(values.host)) {
      throw new VisError('cli.bad-option', `--no-token is for loopback binds only, not ${values.host}.`)
    }
    if (noToken && configured) {
      throw new VisError('cli.bad-option', '--no-token and VIS_TOKEN contradict each other; unset one.')
    }
    // 32 random bytes: a guessing page gets nowhere; printed once, never stored. Beyond loopback
    // the token must be chosen (VIS_TOKEN), so that startServer refuses to start without one.
    const generated = isLoopbackHost(values.host) ? randomBytes(32).toString('base64url') : undefined
    const token = noToken ? undefined : (configured ?? generated)
    const server = await startServer({
      host: values.host,
      port,
      python: values.python,
      mcp: loadMcpConfig().serve,
      project: values.project ?? process.cwd(),
      pool: pool === undefined ? undefined : { size: pool },
      token,
      allowedHosts: values['allow-host'],
      corsOrigins: values['cors-origin'],
      bodyTimeoutMs,
      maxConnections,
      maxConnectionsPerPeer,
      trustedProxies: values['trusted-proxy'],
      ...(allowRoots ? { allowRoots } : {}),
      cluster,
    })
    for (const n of untrustedNotices(server.engine.extensions?.warnings() ?? []))
      process.stderr.write(visibleControls(n))
    const python = explainLocally({ minor: values.python })
    if (!python.resolved) {
      // Said now, not at the first session: with no network that session gets dist.not-found.
      const download = python.sources.find((x) => x.source === 'download')?.where
      process.stderr.write(
        `vis serve: no CPython ${python.minor} on this machine yet; the first session will download it` +
          `${download ? ` from ${download}` : ''} (\`vis runtime status\` says why none answered; ` +
          `\`vis runtime fetch --python ${python.minor}\` or \`vis runtime stage\` gets one ahead of time).\n`,
      )
    }
    if (noToken) {
      process.stderr.write(
        'vis serve: WARNING --no-token: any program or user on this machine can run code as you through this server.\n',
      )
    }
    const shown = token === undefined ? '' : configured ? '$VIS_TOKEN' : token
    const auth = token === undefined ? '' : ` -H "Authorization: Bearer ${shown}"`
    const pageUrl = token === undefined ? `${server.url}/` : `${server.url}/?token=${shown}`
    const role = cluster ? `, node ${cluster.nodeId} at ${cluster.advertise}` : ''
    process.stdout.write(
      `vis serving ${server.url} (home ${server.engine.home}${role})\n` +
        `open: ${pageUrl}\n` +
        `try: curl -s${auth} -X POST ${server.url}/v1/sessions -H 'content-type: application/json' -d '{}'\n`,
    )
    await new Promise<void>((resolve) => {
      const stop = (signal: string) => {
        process.off('SIGINT', onInt)
        process.off('SIGTERM', onTerm)
        process.stderr.write(`vis serve: ${signal}, stopping\n`)
        server.close().then(resolve, (err) => {
          process.stderr.write(`vis serve: ${(err as Error).message}\n`)
          resolve()
        })
      }
      const onInt = () => stop('SIGINT')
      const onTerm = () => stop('SIGTERM')
      process.on('SIGINT', onInt)
      process.on('SIGTERM', onTerm)
    })
    return 0
  },
}

// The operator's allow-list for API clients' roots: the flags, else VIS_ALLOW_ROOTS (PATH-style),
// else none (undefined: any directory the root rules allow).
export function allowRootsFrom(flags: string[], env: string | undefined): string[] | undefined {
  const list = flags.length > 0 ? flags : (env ?? '').split(':').filter((p) => p !== '')
  if (list.length === 0) return undefined
  for (const p of list) {
    if (!isAbsolute(p)) {
      throw new VisError(
        'cli.bad-option',
        `--allow-root and VIS_ALLOW_ROOTS take absolute directories, not ${p}`,
      )
    }
  }
  return list.map((p) => resolve(p))
}
