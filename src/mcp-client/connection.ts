import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import {
  type CallToolResult,
  type Tool as McpTool,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'
import type { Json } from '../tools/types.js'
import { type ErrorCode, errorMessage, VisError } from '../util/errors.js'
import { userDefaultHome } from '../util/home-registry.js'
import { isStdio, type McpServerConfig } from './config.js'
import { runningJudge, stdioLaunch } from './launch.js'

export type ConnectionState = 'idle' | 'connecting' | 'connected' | 'failed' | 'closed'

const STDERR_TAIL_LINES = 20
// Tries of one call to an HTTP server whose connections went away (it restarted).
const HTTP_ATTEMPTS = 4

// One configured MCP server, as one session's client sees it: connected on demand, and
// connected again on the next call after it died or dropped the connection. Every wait is
// bounded (connect_timeout_ms, timeout_ms), so a broken server is an error, never a hang.
export class ServerConnection {
  state: ConnectionState = 'idle'
  lastError: string | undefined
  tools: McpTool[] = []
  // How many times a client was started (the first start included).
  starts = 0
  private client: Client | undefined
  private connecting: Promise<Client> | undefined
  private stderrTail: string[] = []
  // The running stdio server's judge, made at its start from how it was started: run before each call.
  private judge: (() => void) | undefined

  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    private readonly sessionId: string,
    // Called after the server announced a changed tool list and it was listed again.
    private readonly onToolsChanged: () => void = () => {},
    // The vis home: a stdio server without a configured cwd starts in its mcp-servers/ folder.
    private readonly home: string = userDefaultHome(),
  ) {}

  get transportKind(): 'stdio' | 'http' {
    return isStdio(this.config) ? 'stdio' : 'http'
  }

  private fail(code: ErrorCode, message: string, cause?: unknown): VisError {
    return new VisError(code, message, { sessionId: this.sessionId, server: this.name }, { cause })
  }

  // A live client: the current one, or a fresh one (starting the server again for stdio).
  connect(): Promise<Client> {
    if (this.client) return Promise.resolve(this.client)
    this.connecting ??= this.start().finally(() => {
      this.connecting = undefined
    })
    return this.connecting
  }

  private async start(): Promise<Client> {
    this.state = 'connecting'
    this.starts++
    this.stderrTail = []
    const client = new Client({ name: 'vis', version: '1' })
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      if (this.client !== client) return
      try {
        this.tools = await this.listAll(client, this.config.connect_timeout_ms)
        this.onToolsChanged()
      } catch (err) {
        this.lastError = `listing the changed tools failed: ${errorMessage(err)}`
      }
    })
    const ms = this.config.connect_timeout_ms
    let timer: NodeJS.Timeout | undefined
    try {
      const transport = this.transport()
      await Promise.race([
        (async () => {
          await client.connect(transport, { timeout: ms })
          this.tools = await this.listAll(client, ms)
        })(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                this.fail('mcp.connect-timeout', `MCP server ${this.name} did not start within ${ms} ms`),
              ),
            ms,
          )
        }),
      ])
    } catch (err) {
      await client.close().catch(() => undefined)
      this.state = 'failed'
      const message = `${explain(err)}${this.stderrNote()}`
      this.lastError = message
      if (err instanceof VisError) throw this.fail(err.code, message)
      throw this.fail('mcp.connect-failed', `MCP server ${this.name} could not be reached: ${message}`, err)
    } finally {
      clearTimeout(timer)
    }
    // A server that exits (or a connection that drops) is started again by the next call.
    client.onclose = () => {
      if (this.client !== client) return
      this.client = undefined
      if (this.state === 'connected') {
        this.state = 'failed'
        this.lastError = `the server closed the connection${this.stderrNote()}`
      }
    }
    this.client = client
    this.state = 'connected'
    this.lastError = undefined
    return client
  }

  private transport() {
    const c = this.config
    if (isStdio(c)) {
      const launch = stdioLaunch(this.name, c, this.home, { sessionId: this.sessionId })
      this.judge = runningJudge(this.name, c, launch, this.home, { sessionId: this.sessionId })
      const t = new StdioClientTransport({
        command: launch.command,
        args: c.args,
        env: launch.env,
        cwd: launch.cwd,
        stderr: 'pipe',
      })
      t.stderr?.on('data', (d: Buffer) => {
        const lines = d.toString('utf8').split('\n').filter(Boolean)
        this.stderrTail.push(...lines)
        if (this.stderrTail.length > STDERR_TAIL_LINES)
          this.stderrTail.splice(0, this.stderrTail.length - STDERR_TAIL_LINES)
      })
      return t
    }
    const headers: Record<string, string> = { ...c.headers }
    if (c.token) headers.authorization = `Bearer ${c.token}`
    return new StreamableHTTPClientTransport(new URL(c.url), { requestInit: { headers } })
  }

  private stderrNote(): string {
    return this.stderrTail.length > 0 ? `; its stderr ended with:\n${this.stderrTail.join('\n')}` : ''
  }

  private async listAll(client: Client, timeout: number): Promise<McpTool[]> {
    const out: McpTool[] = []
    let cursor: string | undefined
    do {
      const page = await client.listTools(cursor ? { cursor } : {}, { timeout })
      out.push(...page.tools)
      cursor = page.nextCursor
    } while (cursor)
    return out
  }

  // Calls one tool; its failure (isError, a protocol error, a timeout, a dead server) is a
  // VisError whose message the guest sees as the exception's text.
  async call(tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<Json> {
    for (let attempt = 1; ; attempt++) {
      let result: CallToolResult
      try {
        const client = await this.connect()
        await this.judgeRunning()
        result = await this.callOnce(client, tool, args, signal)
      } catch (err) {
        // An HTTP server that restarted: it forgot our session (404), or a connection held to
        // its old process is gone (each pooled one fails once). The request never ran there,
        // so a fresh session may send it again.
        const gone = isSessionGone(err) || isConnectionGone(err) || isConnectionGone((err as Error).cause)
        if (this.transportKind === 'http' && gone && attempt < HTTP_ATTEMPTS) {
          await this.drop()
          continue
        }
        throw err instanceof VisError ? err : this.callError(tool, err)
      }
      return this.value(tool, result)
    }
  }

  // A running stdio server whose cwd, command, PATH, HOME or env locations lie in a root opened since it
  // started is stopped before it is asked anything (judgeRunning): its next import could be a sandbox's.
  // The next call starts it again, which the launch checks refuse while that root stays open.
  private async judgeRunning(): Promise<void> {
    if (this.judge === undefined) return
    try {
      this.judge()
    } catch (err) {
      await this.drop()
      this.state = 'failed'
      this.lastError = errorMessage(err)
      throw err
    }
  }

  private callOnce(client: Client, tool: string, args: Record<string, unknown>, signal?: AbortSignal) {
    return client.callTool({ name: tool, arguments: args }, undefined, {
      timeout: this.config.timeout_ms,
      ...(signal ? { signal } : {}),
    }) as Promise<CallToolResult>
  }

  private callError(tool: string, err: unknown): VisError {
    const message = explain(err)
    // A transport that failed under the call (HTTP server gone): the next call connects anew.
    if (!/^MCP error -?\d+/.test(message) || /-32000/.test(message)) void this.drop()
    const code = /-32001/.test(message) ? 'mcp.timeout' : 'mcp.call-failed'
    const why =
      code === 'mcp.timeout' ? `no answer within ${this.config.timeout_ms} ms (${message})` : message
    return this.fail(code, `MCP server ${this.name}, tool ${tool}: ${why}${this.stderrNote()}`)
  }

  private value(tool: string, result: CallToolResult): Json {
    const content = result.content ?? []
    if (result.isError) {
      const text = content
        .filter((c) => c.type === 'text')
        .map((c) => (c as { text: string }).text)
        .join('\n')
      throw this.fail('mcp.tool-error', `${this.name}.${tool}: ${text || 'the tool reported an error'}`)
    }
    if (result.structuredContent !== undefined) return result.structuredContent as Json
    if (content.length === 1 && content[0]!.type === 'text') return textValue(content[0]!.text)
    return content.map((c) => contentValue(c)) as Json
  }

  // Closes the client (and a stdio server's process); the next call starts it again.
  async drop(): Promise<void> {
    const c = this.client
    this.client = undefined
    await c?.close().catch(() => undefined)
  }

  async close(): Promise<void> {
    this.state = 'closed'
    await this.drop()
  }
}

// An error with what the SDK leaves out of its message: the HTTP status of a refused request,
// and the cause of fetch's bare "fetch failed" (connection refused, unknown host...).
function explain(err: unknown): string {
  let message = errorMessage(err)
  if (err instanceof StreamableHTTPError && typeof err.code === 'number' && err.code > 0)
    message = `HTTP ${err.code}: ${message}`
  const cause = err instanceof Error ? err.cause : undefined
  if (cause instanceof Error && cause.message && !message.includes(cause.message))
    message = `${message} (${cause.message})`
  return message
}

const isSessionGone = (err: unknown) => err instanceof StreamableHTTPError && err.code === 404

const GONE_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'UND_ERR_SOCKET'])

// fetch's own failure (a TypeError) caused by a socket that closed or was refused.
function isConnectionGone(err: unknown): boolean {
  if (!(err instanceof TypeError)) return false
  for (let e: unknown = err, i = 0; e && i < 4; e = (e as { cause?: unknown }).cause, i++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && GONE_CODES.has(code)) return true
  }
  return false
}

// A text that is a JSON object or array crosses as that value (most servers answer JSON as
// text); anything else stays the string it is.
function textValue(text: string): Json {
  const t = text.trimStart()
  if (t.startsWith('{') || t.startsWith('[')) {
    try {
      return JSON.parse(text) as Json
    } catch {
      // Not JSON after all.
    }
  }
  return text
}

function contentValue(c: CallToolResult['content'][number]): Json {
  switch (c.type) {
    case 'text':
      return { type: 'text', text: c.text }
    case 'image':
    case 'audio':
      return { type: c.type, mime_type: c.mimeType, data: c.data }
    case 'resource_link':
      return { type: 'resource_link', uri: c.uri, name: c.name, mime_type: c.mimeType ?? null }
    case 'resource': {
      const r = c.resource as { uri: string; mimeType?: string; text?: string; blob?: string }
      return {
        type: 'resource',
        uri: r.uri,
        mime_type: r.mimeType ?? null,
        text: r.text ?? null,
        blob: r.blob ?? null,
      }
    }
    default:
      return JSON.parse(JSON.stringify(c)) as Json
  }
}
