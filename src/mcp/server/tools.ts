import {
  type CallToolResult,
  ErrorCode,
  McpError,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { readOnlyRoots, readOnlyWhy, type SessionMode } from '../../confinement/modes.js'
import { homeMasksFor, pinRoots } from '../../confinement/root-guard.js'
import type { Engine } from '../../engine/engine.js'
import type { McpServePolicy } from '../../engine/mcp-config.js'
import { MAX_CODE_CHARS, MAX_TIMEOUT_MS } from '../../engine/schemas.js'
import { normalizePolicy } from '../../sessions/session-policy.js'
import { toolJail } from '../../sessions/tool-jail.js'
import { CatArgsSchema } from '../../tools/fs/cat.js'
import { GrepArgsSchema } from '../../tools/fs/grep.js'
import { fileTools } from '../../tools/fs/index.js'
import { LsArgsSchema } from '../../tools/fs/ls.js'
import { PatchArgsSchema } from '../../tools/fs/patch.js'
import { PathGuard } from '../../tools/fs/paths.js'
import { SessionResources } from '../../tools/resources.js'
import type { Tool } from '../../tools/types.js'
import { errorMessage } from '../../util/errors.js'
import { toJsonSchema } from '../../util/json-schema.js'
import { issuesText } from '../../util/zod-issues.js'
import type { ClientPolicy, RootsAsker } from './client-roots.js'
import { type BlockRequest, runBlockForClient } from './execution.js'
import { errorResult, jsonResult } from './render.js'
import type { ClientSessions } from './sessions.js'

const Label = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, "_", "." and "-" only')
  .describe('Which of your sessions to use (default "default"); a new label starts a new session.')

export const PythonExecutionArgs = z
  .object({
    code: z.string().min(1).max(MAX_CODE_CHARS).describe('Python source of one block.'),
    session: Label.optional(),
    timeout_ms: z
      .number()
      .int()
      .min(1)
      .max(MAX_TIMEOUT_MS)
      .optional()
      .describe('Interrupt the block after this long (default 60000).'),
  })
  .strict()

const SessionArgs = z.object({ session: Label.optional() }).strict()

function pythonDoc(policy: McpServePolicy): string {
  const roots = policy.roots.length > 0 ? policy.roots.join(', ') : 'none (no file access)'
  const net = policy.network.enabled
    ? policy.network.allow.length > 0
      ? `limited to ${policy.network.allow.join(', ')}`
      : 'on'
    : 'off'
  return (
    'Run a block of Python in a confined, persistent session: globals, imports, functions and ' +
    'classes stay for the next block. The value of a last expression is shown after what the block ' +
    'printed. Host tools are Python functions inside the block (help(), apropos("word") list them): ' +
    'cat, ls, grep, patch for files; calls settle on their own, and `await gather(a(), b())` runs ' +
    'several at once. vis_attach(path) or vis_attach_bytes(data, name) hands a file back (images ' +
    `come back as images). Roots: ${roots}. Network: ${net}.`
  )
}

type FileToolSpec = { name: 'cat' | 'ls' | 'grep' | 'patch'; schema: z.ZodTypeAny }
const FILE_TOOLS: FileToolSpec[] = [
  { name: 'cat', schema: CatArgsSchema },
  { name: 'ls', schema: LsArgsSchema },
  { name: 'grep', schema: GrepArgsSchema },
  { name: 'patch', schema: PatchArgsSchema },
]

const objectSchema = (s: z.ZodTypeAny) => toJsonSchema(s, 'input') as McpTool['inputSchema']

export type ToolCallExtra = {
  signal: AbortSignal
  roots: RootsAsker
  progressToken?: string | number
  sendProgress: (progress: number, message: string) => Promise<void>
}

// The tools one MCP client sees, with their handlers. The file tools act on the host with the
// server's roots (as a session's own host tools do), guarded exactly like them.
export class McpTools {
  // The file tools for one set of roots (the client's roots may change).
  private files:
    | { key: string; tools: Map<string, Tool>; roots: string[]; pins?: Record<string, string> }
    | undefined
  private readonly resources = new SessionResources()

  constructor(
    private readonly engine: Engine,
    private readonly policy: ClientPolicy,
    private readonly sessions: ClientSessions,
    // The server's roots as pinned at its start: a root among them that now names another
    // directory refuses the file tools (policy.root-changed).
    private readonly pins?: Readonly<Record<string, string>>,
  ) {}

  private fileTools(
    roots: string[],
    mode?: SessionMode,
  ): { tools: Map<string, Tool>; roots: string[]; pins?: Record<string, string> } {
    // The vis homes inside the roots are refused as the sessions' jails hide them (a client that
    // reads a home reads every session's transcript and its servers' tokens; one that patches its
    // mcp.json plants a command the host runs). A home opened since the last call is a new key.
    const hidden =
      roots.length > 0 ? [...(this.engine.extensions?.maskFor(roots) ?? []), ...homeMasksFor(roots)] : []
    const key = JSON.stringify([roots, mode ?? null, hidden])
    if (this.files?.key === key) return this.files
    const tools = new Map<string, Tool>()
    const pinned = this.pinClientRoots(roots)
    if (pinned.roots.length > 0) {
      const guard = new PathGuard(pinned.roots, 'mcp', hidden, undefined, pinned.pins)
      // The served sessions' mode holds for the file tools the client calls directly too.
      const frozen = readOnlyRoots({ roots, mode })
      const why = readOnlyWhy({ roots, mode })
      if (frozen.length > 0 && why) guard.readOnlyRoots = { roots: frozen, why }
      for (const t of fileTools(guard)) {
        if (FILE_TOOLS.some((f) => f.name === t.name)) tools.set(t.name, t)
      }
    }
    this.files = { key, tools, roots: pinned.roots, ...(pinned.pins ? { pins: pinned.pins } : {}) }
    return this.files
  }

  // A client root narrower than the server's (inside a server root) is pinned when the file
  // tools for it are made, opened and checked to lie beneath a server root: another sandbox over
  // that server root could later swap it for a link out, and the tools would follow the link
  // (policy.root-changed instead). A client root that cannot be pinned gets no file tools.
  private pinClientRoots(roots: string[]): { roots: string[]; pins?: Record<string, string> } {
    const serverPins = this.pins ?? {}
    const within = this.policy.serverRoots
    const pins: Record<string, string> = { ...serverPins }
    const kept: string[] = []
    for (const root of roots) {
      if (serverPins[root] !== undefined) {
        kept.push(root)
        continue
      }
      try {
        Object.assign(pins, pinRoots([root], { within, pins: serverPins }, { op: 'mcp' }))
        kept.push(root)
      } catch {
        // Swapped, gone, or no longer beneath a server root: nothing to offer tools over.
      }
    }
    return { roots: kept, pins: Object.keys(pins).length > 0 ? pins : undefined }
  }

  async list(roots: RootsAsker): Promise<McpTool[]> {
    const policy = await this.policy.get(roots)
    const files = this.fileTools(policy.roots, policy.mode)
    const tools: McpTool[] = [
      {
        name: 'python_execution',
        title: 'Run Python',
        description: pythonDoc(policy),
        inputSchema: objectSchema(PythonExecutionArgs),
      },
      {
        name: 'python_interrupt',
        title: 'Interrupt Python',
        description: 'Interrupt the block running in one of your sessions; its globals stay.',
        inputSchema: objectSchema(SessionArgs),
      },
      {
        name: 'session_reset',
        title: 'Reset session',
        description:
          'Close one of your sessions (its transcript stays readable as a resource); the next block starts a fresh interpreter.',
        inputSchema: objectSchema(SessionArgs),
        annotations: { destructiveHint: true },
      },
    ]
    for (const f of FILE_TOOLS) {
      const t = files.tools.get(f.name)
      if (!t) continue
      tools.push({
        name: t.name,
        description: `${t.doc}\nIn Python: ${t.name}${t.signature}.`,
        inputSchema: objectSchema(f.schema),
        annotations: { readOnlyHint: t.name !== 'patch' },
      })
    }
    return tools
  }

  async call(name: string, raw: unknown, extra: ToolCallExtra): Promise<CallToolResult> {
    const args = raw ?? {}
    try {
      switch (name) {
        case 'python_execution': {
          const a = parse(name, PythonExecutionArgs, args)
          const request: BlockRequest = { code: a.code, label: a.session, timeoutMs: a.timeout_ms }
          const policy = await this.policy.get(extra.roots)
          return await runBlockForClient(this.engine, this.sessions, request, policy, extra)
        }
        case 'python_interrupt': {
          const a = parse(name, SessionArgs, args)
          const id = this.sessions.get(a.session)
          if (!id) return jsonResult({ landed: false, block_id: null, note: 'this session has not started' })
          return jsonResult(await this.engine.interrupt(id))
        }
        case 'session_reset': {
          const a = parse(name, SessionArgs, args)
          const closed = await this.sessions.reset(a.session)
          return jsonResult({ closed: closed ?? null })
        }
        default: {
          const policy = await this.policy.get(extra.roots)
          const files = this.fileTools(policy.roots, policy.mode)
          const tool = files.tools.get(name)
          // A protocol error, as MCP asks for an unknown tool (a failure inside a tool is isError).
          if (!tool)
            throw new McpError(
              ErrorCode.InvalidParams,
              `No tool named ${JSON.stringify(name)}; list the tools to see what exists.`,
              { tool: name },
            )
          // A process a tool starts (grep's ripgrep) runs in a jail of the roots: a session's
          // sandbox may swap links in them while it walks (src/tools/fs/search.ts). One per call,
          // started only if the tool spawns, so nothing outlives the call.
          const jail = this.engine.runtime.confined
            ? toolJail({
                sessionId: 'mcp',
                // Mounted only if each root is still what it was pinned to.
                policy: normalizePolicy({ roots: files.roots, ...(files.pins ? { pins: files.pins } : {}) }),
              })
            : undefined
          try {
            const value = await tool.run([args], {
              sessionId: 'mcp',
              roots: files.roots,
              signal: extra.signal,
              resources: this.resources,
              ...(jail ? { spawn: jail.spawn } : {}),
            })
            return jsonResult(value)
          } finally {
            await jail?.dispose()
          }
        }
      }
    } catch (err) {
      if (err instanceof McpError) throw err
      return errorResult(errorMessage(err))
    }
  }

  async close(): Promise<void> {
    await this.resources.dispose()
  }
}

function parse<S extends z.ZodTypeAny>(tool: string, schema: S, value: unknown): z.output<S> {
  const r = schema.safeParse(value)
  if (r.success) return r.data
  const why = issuesText(r.error, 'arguments')
  throw new Error(`${tool}: ${why}`)
}
