import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListRootsResultSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  RootsListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { pinRoots } from '../../confinement/root-guard.js'
import type { Engine } from '../../engine/engine.js'
import type { McpServePolicy } from '../../engine/mcp-config.js'
import { errorMessage, VisError } from '../../util/errors.js'
import { packageRoot } from '../../util/home.js'
import { ClientPolicy } from './client-roots.js'
import { listResources, readResource } from './resources.js'
import { ClientSessions } from './sessions.js'
import { McpTools } from './tools.js'

const version = (() => {
  try {
    return (JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string })
      .version
  } catch {
    return '0.0.0'
  }
})()

// MCP's code for a resource that does not exist (spec: server/resources, "Error Handling"); the
// SDK names no constant for it.
const RESOURCE_NOT_FOUND = -32002

// How long a client may take to list its roots before its sessions get the server's.
const ROOTS_TIMEOUT_MS = 10_000

type Extra = Parameters<Parameters<Server['setRequestHandler']>[1]>[1]

export type McpServerOptions = {
  // The most one resources/read answer may come to (resources.ts RESOURCE_ANSWER_BYTES unless
  // set: /mcp gives its event streams' bound).
  resourceAnswerBytes?: number
}

export type VisMcpServer = {
  server: Server
  // Tool calls being served now (a block can run long after its request was answered with a stream).
  readonly active: number
  // Closes the client's sessions (their history stays) and the protocol.
  close(): Promise<void>
}

// The server's roots pinned when it starts (device:inode, root-guard.ts): a root another
// sandbox swaps for a link before a client's first call is refused (policy.root-changed), not
// followed. A root that cannot be opened now is left to the refusal its first use gives.
export function pinServeRoots(roots: readonly string[] | undefined): Record<string, string> | undefined {
  if (!roots || roots.length === 0) return undefined
  try {
    return pinRoots(roots, {}, { op: 'mcp' })
  } catch {
    return undefined
  }
}

// vis as an MCP server for one client connection: its own sessions, the tools and the
// resources over them. Each transport connection gets one (a stdio process has one; the
// HTTP endpoint makes one per MCP session).
// pins: the roots as pinned when the serving began (vis serve's /mcp pins once, at mount);
// unset, they are pinned now (a stdio server starts with its one client).
export function createVisMcpServer(
  engine: Engine,
  policy: McpServePolicy,
  label: string,
  pins = pinServeRoots(policy.roots),
  options: McpServerOptions = {},
): VisMcpServer {
  const server = new Server(
    { name: 'vis', title: 'vis: confined, stateful Python', version },
    {
      // The tool list changes when the client's roots do (the file tools need a root).
      capabilities: { tools: { listChanged: true }, resources: {} },
      instructions:
        'python_execution runs Python in a confined session whose state persists between calls; ' +
        'read each session transcript and attachments as resources.',
    },
  )
  const clientPolicy = new ClientPolicy(policy, () => server.getClientCapabilities()?.roots !== undefined)
  const asker = (extra: Extra) => async () =>
    (await extra.sendRequest({ method: 'roots/list' }, ListRootsResultSchema, { timeout: ROOTS_TIMEOUT_MS }))
      .roots
  const sessions = new ClientSessions(engine, `MCP ${label}`, policy.roots, pins)
  const tools = new McpTools(engine, clientPolicy, sessions, pins)
  server.setRequestHandler(ListToolsRequestSchema, async (_req, extra) => ({
    tools: await tools.list(asker(extra)),
  }))
  server.setNotificationHandler(RootsListChangedNotificationSchema, async () => {
    clientPolicy.invalidate()
    await server.sendToolListChanged().catch(() => undefined)
  })
  let active = 0
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const progressToken = req.params._meta?.progressToken
    active++
    try {
      return await tools.call(req.params.name, req.params.arguments, {
        signal: extra.signal,
        roots: asker(extra),
        progressToken,
        sendProgress: (progress, message) =>
          progressToken === undefined
            ? Promise.resolve()
            : extra.sendNotification({
                method: 'notifications/progress',
                params: { progressToken, progress, message },
              }),
      })
    } finally {
      active--
    }
  })
  server.setRequestHandler(ListResourcesRequestSchema, (req) => {
    try {
      return listResources(engine, sessions, req.params?.cursor)
    } catch (err) {
      // A cursor this server did not give: the client's request, not the server, is wrong.
      if (err instanceof VisError && err.code === 'mcp.invalid-cursor') {
        throw new McpError(ErrorCode.InvalidParams, err.message, { cursor: req.params?.cursor })
      }
      throw err
    }
  })
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: 'vis://sessions/{session}/transcript',
        name: 'transcript',
        mimeType: 'text/markdown',
        description:
          'A session of yours: its last 50 blocks with their output, each field cut to 65536 characters; ' +
          'earlier blocks at ?before=<position of the first block shown>',
      },
      {
        uriTemplate: 'vis://sessions/{session}/attachments/{attachment}',
        name: 'attachment',
        description: 'A file a block of yours attached',
      },
    ],
  }))
  // What a resource read reserved (read-gate.ts; every kind), by request id, given back once its answer
  // has been handed to the transport (below), or when the request is cancelled (the SDK then
  // sends nothing). A batch may repeat an id: each id keeps its reads in order.
  const held = new Map<string | number, Array<() => void>>()
  const handedOn = (id: string | number) => {
    const list = held.get(id)
    const release = list?.shift()
    if (list?.length === 0) held.delete(id)
    release?.()
  }
  const hold = (id: string | number, release: () => void, signal: AbortSignal) => {
    const list = held.get(id) ?? []
    list.push(release)
    held.set(id, list)
    signal.addEventListener(
      'abort',
      () => {
        const i = list.indexOf(release)
        if (i >= 0) list.splice(i, 1)
        if (list.length === 0 && held.get(id) === list) held.delete(id)
        release()
      },
      { once: true },
    )
  }
  // Every response the server sends passes here: once the transport has it (an event stream's
  // bytes enqueued for `boundedStream`, a line written to stdout), the read's reservation ends.
  const connect = server.connect.bind(server)
  server.connect = async (transport: Transport) => {
    const send = transport.send.bind(transport)
    transport.send = async (message, options) => {
      try {
        await send(message, options)
      } finally {
        if ('id' in message && !('method' in message) && message.id !== undefined) handedOn(message.id)
      }
    }
    return connect(transport)
  }
  server.setRequestHandler(ReadResourceRequestSchema, async (req, extra) => {
    try {
      const { result, release } = await readResource(engine, sessions, req.params.uri, {
        answerBytes: options.resourceAnswerBytes,
        requestId: extra.requestId,
        signal: extra.signal,
      })
      if (extra.signal.aborted) release()
      else hold(extra.requestId, release, extra.signal)
      return result
    } catch (err) {
      const missing = err instanceof VisError && /not-found$/.test(err.code)
      throw new McpError(missing ? RESOURCE_NOT_FOUND : ErrorCode.InvalidParams, errorMessage(err), {
        uri: req.params.uri,
        // The catalogued code and what it came with (a refused read names its size, the bound and
        // the HTTP URL that serves it whole).
        ...(err instanceof VisError ? { ...err.context, code: err.code } : {}),
      })
    }
  })
  let closing: Promise<void> | undefined
  const close = () => {
    closing ??= (async () => {
      // No answer is sent after this: what reads still hold goes back.
      for (const list of held.values()) for (const release of list.splice(0)) release()
      held.clear()
      await sessions.closeAll()
      await tools.close()
      await server.close().catch(() => undefined)
    })()
    return closing
  }
  server.onclose = () => {
    void close()
  }
  return {
    server,
    get active() {
      return active
    },
    close,
  }
}
