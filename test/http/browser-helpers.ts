import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type Browser, chromium } from 'playwright-core'
import type { Engine } from '../../src/engine/engine.js'
import { type AppOptions, createApp, DEFAULT_MAX_BODY_BYTES } from '../../src/http/app.js'
import { fastRoutes } from '../../src/http/fast-routes/index.js'
import { apiListener } from '../../src/http/server.js'

// Debian's Chromium, headless. `--host-resolver-rules` lets a test point a made-up name at
// loopback, which is what DNS rebinding achieves against a real victim.
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.VIS_CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      ...extraArgs,
    ],
  })
}

// `fast`: answered by the fast routes (src/http/fast-routes), not by hono.
export type Seen = {
  method: string
  path: string
  host: string
  origin: string | null
  status: number
  fast: boolean
}

// The API over an engine on a loopback port, through the listener `vis serve` uses (the fast
// routes first, then hono), every request and its answer recorded, so a test can tell that an
// attack reached the server, which path served it and what the server said to it.
export async function serveRecorded(engine: Engine, options: AppOptions, host = '127.0.0.1') {
  const seen: Seen[] = []
  const fast = fastRoutes(engine, {
    ...options,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
  })
  const listener = apiListener(createApp(engine, options), fast, host)
  const server = createServer((req, res) => {
    const before = fast.served
    listener(req, res)
    const viaFast = fast.served > before
    res.once('finish', () =>
      seen.push({
        method: req.method ?? '',
        path: new URL(req.url ?? '/', 'http://x').pathname,
        host: req.headers.host ?? '',
        origin: req.headers.origin ?? null,
        status: res.statusCode,
        fast: viaFast,
      }),
    )
  })
  await new Promise<void>((r) => server.listen(0, host, () => r()))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://${host}:${port}`,
    port,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}

// A plain static site: what an attacker's (or a trusted UI's) server would send.
export async function staticSite(host: string, pages: Record<string, string>) {
  const server = createServer((req, res) => {
    const body = pages[req.url ?? '/']
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(body ?? 'not found')
  })
  await new Promise<void>((r) => server.listen(0, host, () => r()))
  const port = (server.address() as AddressInfo).port
  return {
    origin: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}
