import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js'
import type { Json, Resource, ResourceRegistry, Tool } from '../tools/types.js'
import { VisError } from '../util/errors.js'
import { issuesText } from '../util/zod-issues.js'
import { type McpServers, type McpServersInput, McpServersSchema, pythonServerName } from './config.js'
import { ServerConnection } from './connection.js'
import { namedArguments, toolShape } from './signature.js'

// What binding needs of a session (src/sessions' Session fits).
export type McpBindable = {
  id: string
  resources: ResourceRegistry
  bindTool(tool: Tool): Promise<void>
  unbind(name: string): Promise<void>
  toolNames(): string[]
}

export const pythonToolName = (server: string, tool: string) =>
  `mcp_${pythonServerName(server)}_${tool.replace(/[^A-Za-z0-9_]/g, '_')}`

// A session's MCP servers: each server's tools bound as `mcp_<server>_<tool>`, plus
// mcp_servers(), mcp_connect(name) and mcp_disconnect(name). Connections are the session's
// own (stdio servers are started per session) and end with it: the set is one of the
// session's resources.
export class SessionMcpClients implements Resource {
  readonly id = 'mcp'
  readonly kind = 'mcp-clients'
  private readonly conns = new Map<string, ServerConnection>()
  private readonly bound = new Map<string, string[]>()

  constructor(
    private readonly session: McpBindable,
    servers: McpServers,
    home?: string,
  ) {
    for (const [name, config] of Object.entries(servers)) {
      const conn: ServerConnection = new ServerConnection(
        name,
        config,
        session.id,
        () => {
          this.bindServerTools(conn)
        },
        home,
      )
      this.conns.set(name, conn)
    }
  }

  // Connects every server at once (each within its connect timeout) and binds the tools of
  // those that answered; one that did not is listed by mcp_servers() with its reason.
  async start(): Promise<void> {
    await Promise.all([
      ...this.controlTools().map((t) => this.session.bindTool(t)),
      ...[...this.conns.values()].map((c) =>
        c.connect().then(
          () => this.bindServerTools(c),
          () => undefined,
        ),
      ),
    ])
  }

  private conn(name: unknown): ServerConnection {
    // By its configured name or as it reads in the tools' names ("brave-search" or "brave_search").
    const c =
      typeof name === 'string'
        ? (this.conns.get(name) ?? [...this.conns.values()].find((x) => pythonServerName(x.name) === name))
        : undefined
    if (!c) {
      throw new VisError(
        'mcp.unknown-server',
        `no MCP server named ${JSON.stringify(name)}; configured: ${[...this.conns.keys()].join(', ') || '(none)'}`,
        { sessionId: this.session.id },
      )
    }
    return c
  }

  // Binds (or rebinds) a server's tools; names it no longer has are unbound. The installs are
  // not awaited: made from a tool call, they would wait for the very block that is waiting for
  // the call. Every later block waits for them.
  private bindServerTools(c: ServerConnection): string[] {
    const names: string[] = []
    for (const t of c.tools) {
      const tool = this.toolFor(c, t)
      names.push(tool.name)
      this.session.bindTool(tool).catch(() => undefined)
    }
    for (const old of this.bound.get(c.name) ?? []) {
      if (!names.includes(old)) this.session.unbind(old).catch(() => undefined)
    }
    this.bound.set(c.name, names)
    return names
  }

  private toolFor(c: ServerConnection, t: McpTool): Tool {
    const shape = toolShape(t.description, t.inputSchema)
    const name = pythonToolName(c.name, t.name)
    return {
      name,
      doc: `${shape.doc}\n\n(MCP server ${c.name}, tool ${t.name})`,
      signature: shape.signature,
      run: async (args, ctx) => {
        const named = namedArguments(name, shape, args)
        if (!named.ok)
          throw new VisError('tool.bad-args', named.message, { sessionId: ctx.sessionId, tool: name })
        const wasUp = c.state === 'connected'
        const value = await c.call(t.name, named.value, ctx.signal)
        // A server started again may have changed its tools.
        if (!wasUp) this.bindServerTools(c)
        return value
      },
    }
  }

  private describeServer(c: ServerConnection): { [key: string]: Json } {
    return {
      name: c.name,
      transport: c.transportKind,
      state: c.state,
      tools: this.bound.get(c.name) ?? [],
      starts: c.starts,
      error: c.lastError ?? null,
    }
  }

  private controlTools(): Tool[] {
    return [
      {
        name: 'mcp_servers',
        doc: "The session's MCP servers: name, transport, state (connected, failed, closed...), the tools bound for each (mcp_<server>_<tool>) and the last error.",
        signature: '()',
        run: async () => [...this.conns.values()].map((c) => this.describeServer(c)),
      },
      {
        name: 'mcp_connect',
        doc: "Connect (or reconnect) an MCP server by name and bind its tools; they are callable from the next block on. Raises with the server's error when it cannot be reached.",
        signature: '(name)',
        run: async (args) => {
          const c = this.conn(args[0])
          await c.drop()
          c.state = 'idle'
          await c.connect()
          this.bindServerTools(c)
          return this.describeServer(c)
        },
      },
      {
        name: 'mcp_disconnect',
        doc: "Disconnect an MCP server by name (a stdio server's process ends) and unbind its tools; mcp_connect(name) brings them back.",
        signature: '(name)',
        run: async (args) => {
          const c = this.conn(args[0])
          await c.close()
          for (const n of this.bound.get(c.name) ?? []) this.session.unbind(n).catch(() => undefined)
          this.bound.set(c.name, [])
          return this.describeServer(c)
        },
      },
    ]
  }

  describe(): { [key: string]: Json } {
    return { servers: [...this.conns.values()].map((c) => this.describeServer(c)) }
  }

  async stop(): Promise<void> {
    await Promise.allSettled([...this.conns.values()].map((c) => c.close()))
  }
}

// Gives a session the tools of these MCP servers (none configured: nothing is bound). The
// connections close when the session is disposed. `home` is the vis home stdio servers without a
// cwd start in (its mcp-servers/ folder); the user's default home when left out.
export async function bindMcpServers(
  session: McpBindable,
  servers: McpServersInput | McpServers,
  home?: string,
): Promise<SessionMcpClients | undefined> {
  // Servers given in code (not through mcp.json, which loadMcpConfig reads) fail the same way: a
  // config error naming what is wrong (an env key that is no variable name...), before any starts.
  const result = McpServersSchema.safeParse(servers)
  if (!result.success)
    throw new VisError('mcp.config', `MCP servers: ${issuesText(result.error, '(top level)')}`, {})
  const parsed = result.data
  if (Object.keys(parsed).length === 0) return undefined
  const clients = new SessionMcpClients(session, parsed, home)
  session.resources.add(clients)
  await clients.start()
  return clients
}
