import { mkdtempSync } from 'node:fs'
import { request } from 'node:http'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { dottedEventName } from '../../src/util/event-names.js'

export const python = process.env.VIS_PYTHON_VERSION

// Each test file gets its own vis home and workspace root.
export function tempHome(prefix: string): { home: string; root: string } {
  const home = mkdtempSync(join(tmpdir(), `vis-${prefix}-home-`))
  const root = mkdtempSync(join(tmpdir(), `vis-${prefix}-root-`))
  process.env.VIS_HOME = home
  return { home, root }
}

export type Json = any

// A tiny JSON client: the status, the headers and the parsed body of every call.
export function client(base: string, defaults: Record<string, string> = {}) {
  return async function call(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; headers: Headers; body: Json; text: string }> {
    const init: RequestInit = { method, headers: { ...defaults, ...headers } }
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body)
      ;(init.headers as Record<string, string>)['content-type'] ??= 'application/json'
    }
    const res = await fetch(base + path, init)
    const text = await res.text()
    let parsed: Json = text
    try {
      parsed = JSON.parse(text)
    } catch {
      // Not JSON (metrics, attachments): keep the text.
    }
    return { status: res.status, headers: res.headers, body: parsed, text }
  }
}

export type SseEvent = { id?: number; event: string; data: Json }

// Reads a Server-Sent Events stream into a list as frames arrive.
export async function openEvents(url: string, headers: Record<string, string> = {}) {
  const ac = new AbortController()
  const res = await fetch(url, { headers, signal: ac.signal })
  const events: SseEvent[] = []
  // The deprecated kebab-named copies (no id) that follow a renamed event, kept apart so `events`
  // holds each event once.
  const aliases: SseEvent[] = []
  const comments: string[] = []
  let ended = false
  let wake: (() => void) | undefined
  const reading = (async () => {
    if (!res.body) return
    const decoder = new TextDecoder()
    let buf = ''
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += decoder.decode(chunk, { stream: true })
      for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
        const block = buf.slice(0, i)
        buf = buf.slice(i + 2)
        const ev: SseEvent = { event: 'message', data: null }
        let data: string | undefined
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) comments.push(line.slice(1).trim())
          else if (line.startsWith('id: ')) ev.id = Number(line.slice(4))
          else if (line.startsWith('event: ')) ev.event = line.slice(7)
          else if (line.startsWith('data: ')) data = (data === undefined ? '' : `${data}\n`) + line.slice(6)
        }
        if (data !== undefined) {
          ev.data = JSON.parse(data)
          if (ev.id === undefined && dottedEventName(ev.event) !== ev.event) aliases.push(ev)
          else events.push(ev)
        }
      }
      wake?.()
    }
  })()
    .catch(() => undefined)
    .finally(() => {
      ended = true
      wake?.()
    })
  return {
    status: res.status,
    headers: res.headers,
    events,
    aliases,
    comments,
    get ended() {
      return ended
    },
    async waitFor(pred: (evs: SseEvent[]) => boolean, ms = 20_000, what = 'events'): Promise<void> {
      const until = Date.now() + ms
      while (!pred(events)) {
        if (ended)
          throw new Error(
            `the stream ended before ${what}; got ${JSON.stringify(events.map((e) => e.event))}`,
          )
        const left = until - Date.now()
        if (left <= 0)
          throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(events.map((e) => e.event))}`)
        await new Promise<void>((r) => {
          wake = r
          setTimeout(r, Math.min(left, 200))
        })
      }
    },
    async close(): Promise<void> {
      ac.abort()
      await reading
    },
  }
}

export const finishedFor = (blockId: string) => (evs: SseEvent[]) =>
  evs.some((e) => e.event === 'block.finished' && e.data.data.block_id === blockId)

export async function waitFor(cond: () => boolean | Promise<boolean>, ms = 20_000, what = 'condition') {
  const until = Date.now() + ms
  while (!(await cond())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

// node:http, because fetch will not send a Host header of our choosing.
export function rawRequest(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: import('node:http').IncomingHttpHeaders; body: Json; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', headers: opts.headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d) => {
        text += d
      })
      res.on('end', () => {
        let body: Json = text
        try {
          body = JSON.parse(text)
        } catch {
          // Not JSON.
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text })
      })
    })
    req.on('error', reject)
    req.end(opts.body)
  })
}

// A server for one test file: loopback, a free port, the test's Python. `call` carries the
// token when one is set.
export async function testServer(opts: import('../../src/http/server.js').ServerOptions) {
  const { startServer } = await import('../../src/http/server.js')
  const server = await startServer({ python, port: 0, ...opts })
  const call = client(server.url, opts.token ? { authorization: `Bearer ${opts.token}` } : {})
  return { server, call }
}

// `vis serve` from source as a child process, its output collected; resolves once it printed its
// banner (or exited).
export async function spawnServe(args: string[], env: NodeJS.ProcessEnv) {
  const { spawn } = await import('node:child_process')
  const vis = join(import.meta.dirname, 'fixtures', 'vis.ts')
  const child = spawn(process.execPath, ['--import', 'tsx', vis, 'serve', '--port', '0', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stdout!.on('data', (d) => {
    out += d
  })
  child.stderr!.on('data', (d) => {
    err += d
  })
  await waitFor(() => /try: curl/.test(out) || child.exitCode !== null, 60_000, 'vis serve to print its URL')
  return { child, out: () => out, err: () => err }
}

// A raw client of a session's event stream that sends its request and then reads nothing (a
// paused socket): what the server queues for it backs up behind the loopback buffers. `closed`
// turns true once the server's close reaches it (after the socket is resumed).
export async function stalledReader(
  url: URL,
  id: string,
): Promise<{ socket: Socket; closed: () => boolean }> {
  const socket = connect(Number(url.port), url.hostname)
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  let closed = false
  socket.on('close', () => {
    closed = true
  })
  socket.on('error', () => undefined)
  socket.pause()
  socket.write(
    `GET /v1/sessions/${id}/events HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\n\r\n`,
  )
  return { socket, closed: () => closed }
}
