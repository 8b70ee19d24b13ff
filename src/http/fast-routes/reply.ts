import type { ServerResponse } from 'node:http'
import { AS_BUFFER_FROM } from '../answer-budget.js'
import type { Refusal } from '../middleware/index.js'

const JSON_TYPE = 'application/json'
const HTML_TYPE = 'text/html; charset=UTF-8'

// One write of head and body: serialized once, headers set directly (what hono's c.json and
// @hono/node-server's response path do in several steps).
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> | undefined,
  extra?: Record<string, string>,
): void {
  const text = JSON.stringify(body)
  // A large answer as one Buffer, written once: a block's answer may be ~8 MB of JSON, and a
  // string handed to the socket is kept as well as copied (src/http/answer-budget.ts). A small one
  // stays a string, which Node writes together with the head.
  send(res, status, text.length >= AS_BUFFER_FROM ? Buffer.from(text) : text, JSON_TYPE, headers, extra)
}

export function sendRefusal(res: ServerResponse, r: Refusal, cors: Record<string, string> | undefined): void {
  if (r.json !== undefined) sendJson(res, r.status, r.json, cors, r.headers)
  else if (r.html !== undefined) send(res, r.status, r.html, HTML_TYPE, cors, r.headers)
  else send(res, r.status, undefined, undefined, cors, r.headers)
}

function send(
  res: ServerResponse,
  status: number,
  text: string | Buffer | undefined,
  type: string | undefined,
  headers: Record<string, string> | undefined,
  extra: Record<string, string> | undefined,
): void {
  // The client is gone (a hang-up while the block ran): nothing to write to.
  if (res.destroyed) return
  const head: Record<string, string | number> = { ...headers, ...extra }
  if (text !== undefined) {
    head['Content-Type'] = type!
    head['Content-Length'] = Buffer.byteLength(text)
  }
  res.writeHead(status, head)
  res.end(text)
}
