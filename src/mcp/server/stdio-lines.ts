import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js'

// Newline-delimited JSON-RPC on stdin/stdout, as the SDK's StdioServerTransport speaks it, but
// with each message validated once. The SDK's transport parses every line against the whole
// message union, and its Protocol then tries the line against the response schemas (failing,
// which is zod's slow path) before the request schema: four parses, about a fifth of an MCP
// block's time (issue 34). Here a request's envelope is checked by hand and the request handed
// straight to the request router (which parses it with its method's schema); anything else (responses to the server's own requests,
// notifications) goes through the SDK's own path unchanged.

export type RequestRouter = (request: JSONRPCRequest) => void

// Lines past this are refused, as the SDK refuses them (its default buffer bound).
const MAX_BUFFERED_BYTES = 10 * 1024 * 1024

// The JSON-RPC envelope of a request, as the SDK's JSONRPCRequestSchema has it (strict: no other
// keys; an integer or string id). What is in params is the method's own schema's to check: the
// router parses every request with the schema its handler was registered with.
const ENVELOPE = new Set(['jsonrpc', 'id', 'method', 'params'])
export function isRequestEnvelope(v: unknown): v is JSONRPCRequest {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false
  const m = v as Record<string, unknown>
  for (const key in m) if (!ENVELOPE.has(key)) return false
  const { id, params } = m
  return (
    m.jsonrpc === '2.0' &&
    typeof m.method === 'string' &&
    (typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id))) &&
    (params === undefined || (typeof params === 'object' && params !== null && !Array.isArray(params)))
  )
}

export class StdioLines implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  private buffered: Buffer | undefined
  private router: RequestRouter | undefined
  private started = false

  constructor(
    private readonly stdin: NodeJS.ReadableStream = process.stdin,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
  ) {}

  // Requests go to `router` from now on (after server.connect, which installs onmessage).
  routeRequests(router: RequestRouter): void {
    this.router = router
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('the stdio transport is started already')
    this.started = true
    this.stdin.on('data', this.onData)
    this.stdin.on('error', this.onError)
  }

  private readonly onError = (error: Error) => this.onerror?.(error)

  private readonly onData = (chunk: Buffer) => {
    const size = (this.buffered?.length ?? 0) + chunk.length
    if (size > MAX_BUFFERED_BYTES) {
      this.buffered = undefined
      this.onerror?.(new Error(`a message line exceeded ${MAX_BUFFERED_BYTES} bytes`))
      this.close().catch(() => undefined)
      return
    }
    let buf = this.buffered ? Buffer.concat([this.buffered, chunk]) : chunk
    for (let nl = buf.indexOf(10); nl >= 0; nl = buf.indexOf(10)) {
      const line = buf.toString('utf8', 0, nl > 0 && buf[nl - 1] === 13 ? nl - 1 : nl)
      buf = buf.subarray(nl + 1)
      this.receive(line)
    }
    this.buffered = buf.length > 0 ? buf : undefined
  }

  private receive(line: string): void {
    try {
      const value: unknown = JSON.parse(line)
      if (this.router && isRequestEnvelope(value)) {
        this.router(value)
        return
      }
      this.onmessage?.(JSONRPCMessageSchema.parse(value))
    } catch (error) {
      this.onerror?.(error as Error)
    }
  }

  async close(): Promise<void> {
    this.stdin.off('data', this.onData)
    this.stdin.off('error', this.onError)
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause()
    this.buffered = undefined
    this.onclose?.()
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(`${JSON.stringify(message)}\n`)) resolve()
      else this.stdout.once('drain', resolve)
    })
  }
}
