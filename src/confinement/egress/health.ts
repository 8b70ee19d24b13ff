import { createServer as createHttpServer, get, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Check } from '../probe.js'
import { startEgressForwarder } from './forwarder.js'
import { startEgressProxy } from './proxy.js'

// `vis doctor`'s egress checks, run on the host with the real parts a sandbox uses: the
// egress proxy (policy evaluator, resolver, dialler) on its unix socket and the loopback
// relay a worker starts in its namespace. A loopback server stands in for the upstream:
// allowed by an explicit `127.0.0.1:PORT` entry, it must answer through relay + proxy,
// and the address floor must refuse cloud metadata and a loopback port not listed.
export async function egressChecks(): Promise<Check[]> {
  const checks: Check[] = []
  const upstream = createHttpServer((_req, res) => res.end('vis-egress-ok'))
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()))
  const port = (upstream.address() as AddressInfo).port
  const proxy = await startEgressProxy({ allow: [`127.0.0.1:${port}`], deny: [] })
  const relay = await startEgressForwarder({ port: 0, socketPath: proxy.socketPath }).catch((e: Error) => e)
  try {
    if (relay instanceof Error) {
      checks.push({
        id: 'egress.relay',
        level: 'error',
        message: `the egress relay cannot listen: ${relay.message}`,
      })
      return checks
    }
    const t0 = performance.now()
    const body = await viaRelay(relay.port, `http://127.0.0.1:${port}/`).catch((e: Error) => e)
    const ms = (performance.now() - t0).toFixed(1)
    if (body === 'vis-egress-ok')
      checks.push({
        id: 'egress.path',
        level: 'info',
        message: `egress path works: relay -> host proxy (unix socket) -> checked dial, ${ms} ms for a first request`,
      })
    else
      checks.push({
        id: 'egress.path',
        level: 'error',
        message: `the egress path did not carry an allowed request: ${body instanceof Error ? body.message : body}`,
      })
    const metadata = await connectStatus(proxy.socketPath, '169.254.169.254:80')
    const unlisted = await connectStatus(
      proxy.socketPath,
      `127.0.0.1:${port === 65535 ? port - 1 : port + 1}`,
    )
    const floorOk = metadata === 403 && unlisted === 403
    checks.push({
      id: 'egress.floor',
      level: floorOk ? 'info' : 'error',
      message: floorOk
        ? 'egress policy refuses cloud metadata and unlisted loopback ports (address floor)'
        : `egress policy floor failed: metadata -> ${metadata}, unlisted loopback -> ${unlisted} (want 403)`,
    })
    return checks
  } finally {
    if (!(relay instanceof Error)) await relay.close()
    await proxy.close()
    upstream.closeAllConnections()
    upstream.close()
  }
}

function viaRelay(relayPort: number, url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = get({ host: '127.0.0.1', port: relayPort, path: url, timeout: 10_000 }, (res) => {
      let body = ''
      res.on('data', (d) => {
        body += d
      })
      res.on('end', () => resolve(body))
    })
    req.on('timeout', () => req.destroy(new Error('timed out')))
    req.on('error', reject)
  })
}

function connectStatus(socketPath: string, authority: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ socketPath, method: 'CONNECT', path: authority, timeout: 10_000 })
    req.on('connect', (res, socket) => {
      socket.destroy()
      resolve(res.statusCode ?? 0)
    })
    req.on('response', (res) => resolve(res.statusCode ?? 0))
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve(0))
    req.end()
  })
}
