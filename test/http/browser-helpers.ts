import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createAdaptorServer } from '@hono/node-server'
import type { Hono } from 'hono'
import { type Browser, chromium } from 'playwright-core'

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

export type Seen = { method: string; path: string; host: string; origin: string | null; status: number }

// The app on a loopback port, every request and its answer recorded, so a test can tell that an
// attack reached the server and what the server said to it.
export async function serveRecorded(app: Hono, host = '127.0.0.1') {
  const seen: Seen[] = []
  const server = createAdaptorServer({
    fetch: async (req: Request) => {
      const res = await app.fetch(req)
      const url = new URL(req.url)
      seen.push({
        method: req.method,
        path: url.pathname,
        host: req.headers.get('host') ?? '',
        origin: req.headers.get('origin'),
        status: res.status,
      })
      return res
    },
  }) as Server
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
