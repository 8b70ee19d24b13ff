import { statSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { createEngine } from '../../engine/engine.js'
import {
  loadMcpConfig,
  MCP_NO_REVIEW,
  type McpServePolicy,
  McpServePolicySchema,
} from '../../engine/mcp-config.js'
import { serveStdio } from '../../mcp/server/transport-stdio.js'
import { VisError } from '../../util/errors.js'
import type { Command } from '../command.js'

const usage = `Usage: vis mcp [--root DIR]... [--read-only] [--network] [--allow HOST]... [--python 3.X] [--pool N] [--project DIR]

Serve vis as an MCP server on stdin/stdout (for an MCP host's "mcpServers" configuration).
Tools: python_execution (a confined Python session per client, state kept between calls),
python_interrupt, session_reset, and the file tools cat, ls, grep, patch on the roots.
Resources: each session's transcript and attachments. Diagnostics go to stderr.

  --root     a directory sessions may read and write (repeatable; the first is the workspace).
             Without any, "serve" of the vis home's mcp.json, else none. --root, --network and
             --allow replace serve's roots and network; serve's "mode" (read-only) still holds.
  --read-only  sessions and the file tools read the roots and change nothing (mode read-only)
  --review   refused: MCP has no review mode (no step where a person applies a diff); use --read-only
  --network  let sessions reach the network (through the egress proxy; default off)
  --allow    with --network: only these hosts or CIDRs (repeatable)
  --python   the Python minor to run, e.g. 3.12
  --pool     warm workers kept per policy (default 1)
  --project  load DIR/.vis/extensions beside the home's (default: none)

A client that offers MCP roots narrows its sessions to where its roots and these overlap;
it can never widen them.

Streamable HTTP: \`vis serve\` answers MCP at /mcp with the same tools.`

function policyFrom(values: {
  root?: string[]
  network?: boolean
  allow?: string[]
  'read-only'?: boolean
}): McpServePolicy {
  const config = loadMcpConfig().serve
  const cli = values.root !== undefined || values.network !== undefined || values.allow !== undefined
  if (!cli) return values['read-only'] ? { ...config, mode: 'read-only' } : config
  if (values.allow && !values.network) {
    throw new VisError('cli.bad-option', '--allow narrows the network: give --network with it')
  }
  const roots = (values.root ?? []).map((r) => resolve(r))
  // A mistyped root would start a server whose every session fails: say so at once instead.
  for (const r of roots) {
    if (!statSync(r, { throwIfNoEntry: false })?.isDirectory())
      throw new VisError('cli.bad-option', `--root ${r}: no such directory`)
  }
  // The flags name the roots and the network, nothing else: a mode the person set in mcp.json
  // (read-only) is a safety setting that a host's `--root` must not silently drop.
  const mode = values['read-only'] ? 'read-only' : config.mode
  return McpServePolicySchema.parse({
    roots,
    network: { enabled: values.network === true, allow: values.allow ?? [] },
    ...(mode !== undefined ? { mode } : {}),
  })
}

export const mcp: Command = {
  name: 'mcp',
  usage,
  async run(argv) {
    const { values } = parseArgs({
      args: argv,
      options: {
        root: { type: 'string', multiple: true },
        network: { type: 'boolean' },
        'read-only': { type: 'boolean' },
        review: { type: 'boolean' },
        allow: { type: 'string', multiple: true },
        python: { type: 'string' },
        pool: { type: 'string' },
        project: { type: 'string' },
      },
    })
    if (values.review) throw new VisError('cli.bad-option', `vis mcp --review: ${MCP_NO_REVIEW}`)
    const pool = values.pool === undefined ? undefined : Number(values.pool)
    if (pool !== undefined && (!Number.isInteger(pool) || pool < 0 || pool > 64)) {
      throw new VisError('cli.bad-option', `--pool must be 0..64, not ${values.pool}`)
    }
    const policy = policyFrom(values)
    // Other vis processes may share the home (src/engine/ownership.ts): each runs its own sessions.
    const engine = await createEngine({
      python: values.python,
      // MCP hosts start servers in whatever directory they like: no project unless named.
      project: values.project === undefined ? undefined : resolve(values.project),
      pool: pool === undefined ? undefined : { size: pool },
    })
    try {
      const why = await serveStdio(engine, policy)
      process.stderr.write(`vis mcp: ${why}, stopping\n`)
    } finally {
      await engine.close()
    }
    return 0
  },
}
