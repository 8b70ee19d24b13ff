import { z } from 'zod'

// One MCP server a session may use: a command vis starts (stdio), or a Streamable HTTP URL.
// The client runs on the host, never inside a session's jail.
const Timeouts = {
  // Starting the server and listing its tools.
  connect_timeout_ms: z.number().int().min(100).max(600_000).default(20_000),
  // One tool call; past it the call fails with a timeout error and the block goes on.
  timeout_ms: z.number().int().min(100).max(3_600_000).default(60_000),
}

// Other hosts' configurations (VS Code, Cursor, Claude) name the transport; copied over, they
// keep working. SSE, the old transport, is not spoken.
const NOT_SSE = { message: "the SSE transport is not supported; use the server's Streamable HTTP URL" }

// An env key is a portable variable name. The server's environment entry is `${key}=${value}` and a
// name ends at its first `=`, so the key `PERL5LIB=W/lib:` with the value `x` gave the server
// PERL5LIB=W/lib:=x, judged as the value `x` (sixteenth outsider pass); and bash's exported functions
// (`BASH_FUNC_name%%`) are code, not a setting. Refused when mcp.json is read, naming the key.
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
const EnvNameSchema = z
  .string()
  .regex(
    ENV_NAME,
    'an env name is letters, digits and "_", not starting with a digit (an environment entry\'s name ends at ' +
      'its first "=", and a name such as BASH_FUNC_x%% is a shell function, not a setting)',
  )

export const StdioServerSchema = z
  .object({
    type: z.literal('stdio').optional(),
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    env: z.record(EnvNameSchema, z.string()).default({}),
    cwd: z.string().optional(),
    ...Timeouts,
  })
  .strict()

export const HttpServerSchema = z
  .object({
    type: z
      .string()
      .refine((t) => t !== 'sse', NOT_SSE)
      .pipe(z.enum(['http', 'streamable-http', 'streamableHttp']))
      .optional(),
    url: z.string().url(),
    // Sent as `Authorization: Bearer <token>`.
    token: z.string().min(1).optional(),
    headers: z.record(z.string()).default({}),
    ...Timeouts,
  })
  .strict()

export const McpServerConfigSchema = z.union([StdioServerSchema, HttpServerSchema])
export type McpServerConfig = z.output<typeof McpServerConfigSchema>
export type McpServerConfigInput = z.input<typeof McpServerConfigSchema>

// Server names become part of Python names (`mcp_<server>_<tool>`); "-" and "." (as in
// "brave-search", common in other hosts' configurations) become "_" there.
export const ServerNameSchema = z
  .string()
  .regex(
    /^[A-Za-z][A-Za-z0-9_.-]{0,39}$/,
    'a server name is a letter, then letters, digits, "_", "-" or "." (at most 40)',
  )

export const pythonServerName = (name: string) => name.replace(/[^A-Za-z0-9_]/g, '_')

export const McpServersSchema = z
  .record(ServerNameSchema, McpServerConfigSchema)
  .superRefine((servers, ctx) => {
    const seen = new Map<string, string>()
    for (const name of Object.keys(servers)) {
      const py = pythonServerName(name)
      const other = seen.get(py)
      if (other !== undefined)
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: [name],
          message: `servers "${other}" and "${name}" would both be mcp_${py}_...; rename one`,
        })
      seen.set(py, name)
    }
  })
export type McpServers = z.output<typeof McpServersSchema>
export type McpServersInput = z.input<typeof McpServersSchema>

export const isStdio = (c: McpServerConfig): c is z.output<typeof StdioServerSchema> => 'command' in c
