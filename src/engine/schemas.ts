import { z } from 'zod'
import { SessionModeSchema } from '../confinement/modes.js'
import { NetworkPolicySchema } from '../contracts/network-policy.js'
import { DraftStateSchema } from '../drafts/drafts.js'
import { JsonValueSchema } from '../persistence/json.js'
import { SurvivedSchema } from '../sessions/survived.js'
import { EVENT_NAMES } from '../util/event-names.js'

// The engine's public shapes. The library and the HTTP API take and return exactly these
// (snake_case, as they travel as JSON); the OpenAPI document is generated from them.

export const MAX_CODE_CHARS = 512 * 1024
export const DEFAULT_TIMEOUT_MS = 60_000
export const MAX_TIMEOUT_MS = 60 * 60 * 1000

const Id = z.string().min(1).max(128)

export const SessionPolicySchema = z
  .object({
    roots: z
      .array(
        z
          .string()
          .min(1)
          .max(4096)
          .regex(/^\//, 'must be an absolute path: the server resolves nothing against its own directory'),
      )
      .max(64)
      .default([])
      .describe('Directories the session may read and write; the first is its workspace.'),
    network: NetworkPolicySchema.default({}),
    shell: z.boolean().default(false).describe('Whether the shell tool is bound.'),
    mode: SessionModeSchema.optional().describe(
      'How the session may change its roots: workspace (the default) reads and writes them; read-only ' +
        'reads them only, for blocks and host tools alike (writes fail with a PermissionError that says the ' +
        'session is read-only; /tmp stays writable); review writes only a draft of the workspace root.',
    ),
  })
  .strict()
export type SessionPolicy = z.output<typeof SessionPolicySchema>

export const CreateSessionBodySchema = z
  .object({
    // Not only dots: "." and ".." are path segments URL normalisation would change.
    id: Id.regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, "_", "." and "-" only')
      .regex(/[^.]/, 'not only dots: "." and ".." change meaning in a URL path')
      .optional(),
    title: z.string().max(1000).nullable().optional(),
    roots: SessionPolicySchema.shape.roots,
    network: SessionPolicySchema.shape.network,
    shell: SessionPolicySchema.shape.shell,
    mode: SessionPolicySchema.shape.mode,
  })
  .strict()
export type CreateSessionBody = z.input<typeof CreateSessionBodySchema>

export const RunBlockBodySchema = z
  .object({
    code: z.string().max(MAX_CODE_CHARS).describe('Python source of one block.'),
    timeout_ms: z
      .number()
      .int()
      .min(1)
      .max(MAX_TIMEOUT_MS)
      .default(DEFAULT_TIMEOUT_MS)
      .describe(
        'The block must finish this long after it was submitted, the wait behind earlier blocks of the ' +
          'session included: a block still queued then never runs (error block.queue-timeout), a running ' +
          'one is interrupted. Either way the outcome says timed_out.',
      ),
    turn_id: Id.nullable().optional().describe('The turn this block belongs to (created on first use).'),
  })
  .strict()
export type RunBlockBody = z.input<typeof RunBlockBodySchema>

// Far past any session count, far below what the databases take as an integer.
export const MAX_LIST_OFFSET = 1_000_000_000

export const ListSessionsQuerySchema = z
  .object({
    state: z.enum(['open', 'closed', 'all']).default('all'),
    limit: z.coerce.number().int().min(1).max(1000).default(100),
    // Bounded: past int64 the number reached the database and failed there (issue 30).
    offset: z.coerce.number().int().min(0).max(MAX_LIST_OFFSET).default(0),
  })
  .strict()
export type ListSessionsQuery = z.input<typeof ListSessionsQuerySchema>

export const IdempotencyKeySchema = z.string().min(1).max(255)

const Iso = z.string().describe('ISO 8601 time, UTC')

export const AttachmentViewSchema = z.object({
  id: z.string(),
  block_id: z.string(),
  media_type: z.string(),
  name: z.string().nullable(),
  size: z.number().int(),
  sha256: z.string(),
  url: z.string().describe('Where the bytes are served, relative to the API root.'),
})
export type AttachmentView = z.infer<typeof AttachmentViewSchema>

export const BlockErrorViewSchema = z
  .object({ code: z.string().optional(), message: z.string() })
  .catchall(JsonValueSchema)

export const BlockViewSchema = z.object({
  id: z.string(),
  session_id: z.string(),
  turn_id: z.string().nullable(),
  position: z.number().int(),
  status: z
    .enum(['queued', 'running', 'done'])
    .describe('queued: accepted, waiting behind earlier blocks of its session; running; done.'),
  code: z.string(),
  // One stream, as the block's terminal shows it: the guest captures stdout and stderr
  // interleaved (a warning stays beside the print it followed). The live `output` events keep
  // each chunk's stream.
  stdout: z
    .string()
    .describe(
      'What the block printed, stdout and stderr interleaved in order. The live output events say which stream each chunk came from.',
    ),
  result: JsonValueSchema.nullable(),
  value: JsonValueSchema.nullable().describe(
    "The value of the block's last expression when it also printed (`result` is then null): what the " +
      'agent and MCP show after the output, as a notebook does.',
  ),
  error: BlockErrorViewSchema.nullable(),
  duration_ms: z.number().int().nullable(),
  timed_out: z.boolean(),
  survived: SurvivedSchema.nullable().describe(
    'After an interrupt, a timeout or a worker replacement: names intact, restored from the definitions ' +
      'snapshot, or lost, and the tool calls that were cancelled. The next block reads it as `session["survived"]`.',
  ),
  created_at: Iso,
  finished_at: Iso.nullable(),
  attachments: z.array(AttachmentViewSchema),
  code_display: z
    .string()
    .optional()
    .describe(
      'With ?format=display only: the code formatted for people (ruff); `code` stays as written. ' +
        'Verbatim when the code does not parse, is huge, or the formatter is unavailable.',
    ),
  truncated: z
    .literal(true)
    .optional()
    .describe(
      'In a session view (GET /v1/sessions/{id}) only: this block was cut to fit it: `code` and `stdout` ' +
        'hold their first 16 384 characters, a longer `result` or `value` is null, a longer `error` is ' +
        'replaced by a note. GET /v1/sessions/{id}/blocks/{block_id} has all of it.',
    ),
})
export type BlockView = z.infer<typeof BlockViewSchema>

export const WorkerStateSchema = z
  .enum(['live', 'dormant', 'retired', 'closed'])
  .describe(
    'live: a worker holds its interpreter; dormant: none yet (reopened on the next block, defs restored); ' +
      'retired: its worker was retired and it takes no more blocks; closed: the session was closed.',
  )

export const SessionViewSchema = z.object({
  id: z.string(),
  title: z.string().nullable(),
  policy: JsonValueSchema,
  state: z.enum(['open', 'closed']),
  worker: WorkerStateSchema,
  busy: z.boolean(),
  created_at: Iso,
  closed_at: Iso.nullable(),
  last_event_id: z.number().int(),
  // Trunk, or the draft the session works in (src/drafts).
  draft: DraftStateSchema.optional(),
})
export type SessionView = z.infer<typeof SessionViewSchema>

export const SessionDetailSchema = SessionViewSchema.extend({
  blocks: z.array(BlockViewSchema),
  blocks_before: z
    .number()
    .int()
    .optional()
    .describe(
      'In a session view (GET /v1/sessions/{id}): how many earlier blocks are not listed. Ask for them ' +
        'with ?before=<position of the first block listed>.',
    ),
})
export type SessionDetail = z.infer<typeof SessionDetailSchema>

// A session view over HTTP lists its last blocks, each cut to this many characters, so one view
// costs the server the same whatever the session's blocks printed (thirteenth outsider pass).
export const SESSION_VIEW_BLOCK_CHARS = 65_536
export const SESSION_VIEW_DEFAULT_BLOCKS = 50
// The largest block position a store holds (PostgreSQL's integer).
export const BLOCK_POSITION_MAX = 2_147_483_647

export const SessionDetailQuerySchema = z
  .object({
    format: z
      .enum(['raw', 'display'])
      .optional()
      .describe('display: each block also carries `code_display`, its code formatted for people.'),
  })
  .strict()
export type SessionDetailQuery = z.infer<typeof SessionDetailQuerySchema>

export const SessionViewQuerySchema = SessionDetailQuerySchema.extend({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(SESSION_VIEW_DEFAULT_BLOCKS)
    .describe('How many blocks to list: the last ones (before `before`, if given).'),
  // Positions are 32-bit integers in PostgreSQL: a larger bound is a client's mistake (400), not a
  // refused query (500).
  before: z.coerce
    .number()
    .int()
    .min(0)
    .max(BLOCK_POSITION_MAX)
    .optional()
    .describe(
      'List only blocks whose position is below this (the previous page: the first position listed).',
    ),
}).strict()
export type SessionViewQuery = z.input<typeof SessionViewQuerySchema>

export const SessionListSchema = z.object({
  sessions: z.array(SessionViewSchema),
  next_offset: z
    .number()
    .int()
    .optional()
    .describe(
      'Present when fewer sessions than `limit` fit 4 MiB of JSON and more may follow: the `offset` that lists them.',
    ),
})

export const InterruptResultSchema = z.object({
  landed: z.boolean().describe('A running block received the interrupt.'),
  retired: z.boolean().describe('The interrupt could not land in time and the worker was retired.'),
  cancelled: z.boolean().describe('The named block had not started, and was cancelled.'),
  block_id: z.string().nullable(),
})
export type InterruptResult = z.infer<typeof InterruptResultSchema>

export const InterruptBodySchema = z
  .object({
    block_id: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Interrupt only this block: if another one runs now, nothing is interrupted; if it is queued, it is cancelled.',
      ),
  })
  .strict()

// The names are the catalogue's (src/util/event-names.ts).
export const EventTypeSchema = z.enum(EVENT_NAMES)
export type EventType = z.infer<typeof EventTypeSchema>

export const EventViewSchema = z.object({
  id: z.number().int().describe('Monotonic per session; the SSE id.'),
  type: EventTypeSchema,
  at: Iso,
  data: JsonValueSchema,
})
export type EventView = z.infer<typeof EventViewSchema>

export const ExtensionViewSchema = z.object({
  name: z.string(),
  key: z.string(),
  scope: z.enum(['global', 'project']),
  path: z.string(),
  version: z.string(),
  alias: z.string(),
  description: z.string(),
  tools: z.array(z.string()).describe('As the model sees them: `<alias>_<name>(signature)`.'),
  hooks: z.array(z.string()).describe('`before <tool>` / `after <tool>`.'),
})
export type ExtensionView = z.infer<typeof ExtensionViewSchema>

export const ExtensionWarningViewSchema = z.object({
  key: z.string(),
  path: z.string(),
  scope: z.enum(['global', 'project']),
  reason: z.string(),
  kept_previous: z.boolean().describe('A reload failed and the version loaded before keeps working.'),
})

export const ExtensionListSchema = z.object({
  extensions: z.array(ExtensionViewSchema),
  warnings: z.array(ExtensionWarningViewSchema),
  shadowed: z.array(z.string()).describe('Global extension files hidden by a project one of the same name.'),
  dirs: z.array(z.string()).describe('Extension directories that exist, project first.'),
})
export type ExtensionList = z.infer<typeof ExtensionListSchema>
