import { z } from 'zod'

const ToolDecl = z.object({ name: z.string(), doc: z.string(), signature: z.string() })

// The sealed description of one extension, as the trusted worker reports it.
export const ExtensionManifest = z.object({
  name: z.string(),
  description: z.string(),
  version: z.string(),
  alias: z.string(),
  prompt: z.string().nullable(),
  activation: z.union([z.string(), z.array(z.string())]).nullable(),
  tools: z.array(ToolDecl),
  slash_commands: z.array(ToolDecl),
  op_hooks: z.array(
    z.object({ index: z.number().int(), when: z.enum(['before', 'after']), tool: z.string() }),
  ),
  ctx: z.enum(['data', 'function']).nullable(),
  ctx_data: z.record(z.unknown()).nullable(),
  // Pure-Python modules made importable in every session's sandbox: name -> source.
  sandbox_modules: z.record(z.string()).default({}),
})
export type ExtensionManifest = z.infer<typeof ExtensionManifest>

export const LoadResult = z.union([
  z.object({ ok: z.literal(true), manifest: ExtensionManifest, sha: z.string(), source: z.string() }),
  z.object({ ok: z.literal(false), error: z.string() }),
])
export type LoadResult = z.infer<typeof LoadResult>

export const HookAnswer = z.object({ refused: z.string().nullable() })
export type HookAnswer = z.infer<typeof HookAnswer>

export const TestRecord = z.object({
  nodeid: z.string(),
  outcome: z.enum(['passed', 'failed', 'skipped', 'error', 'xfailed', 'xpassed']),
  message: z.string(),
  file: z.string(),
})
export type TestRecord = z.infer<typeof TestRecord>
export const TestRun = z.object({ exit_code: z.number().int(), records: z.array(TestRecord) })
