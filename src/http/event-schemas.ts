import { z } from 'zod'
import { EventTypeSchema, type EventView } from '../engine/schemas.js'
import { JsonValueSchema } from '../persistence/json.js'

// The `data` of each event type on the stream, for the OpenAPI document and for clients that
// check what they receive. Extra keys are allowed: a field added later must not break a client.
// An event type without an entry here is documented with any JSON data.
const blockId = z.string().describe('The block this event is about.')

export const EventDataSchemas: Partial<Record<EventView['type'], z.AnyZodObject>> = {
  'block.started': z
    .object({
      block_id: blockId,
      position: z.number().int(),
      turn_id: z.string().nullable(),
      code: z.string(),
    })
    .passthrough(),
  output: z
    .object({ block_id: blockId, stream: z.enum(['stdout', 'stderr']), data: z.string() })
    .passthrough()
    .describe('What the block printed, in order; adjacent prints arrive merged.'),
  'block.finished': z
    .object({
      block_id: blockId,
      position: z.number().int(),
      duration_ms: z.number().int().nullable(),
      timed_out: z.boolean(),
      result: JsonValueSchema.nullable(),
      error: z.object({ code: z.string().optional(), message: z.string() }).passthrough().nullable(),
      attachments: z.array(z.string()).describe('Attachment ids; GET the block for their URLs.'),
    })
    .passthrough(),
  interrupt: z
    .object({ block_id: z.string().nullable(), landed: z.boolean(), retired: z.boolean() })
    .passthrough(),
  'worker.retired': z.object({ pid: z.number().int().nullable(), reason: z.string() }).passthrough(),
  'defs.restored': z.object({}).passthrough().describe("What the session's restored definitions came to."),
  'session.closed': z
    .object({ reason: z.string() })
    .passthrough()
    .describe('The last event: the stream ends, and reconnecting gets 204.'),
}

const Iso = z.string().describe('ISO 8601 time, UTC')

// One event as the `data:` line of its SSE frame carries it (the frame's `event:` is its type).
export const EventSchemas = EventTypeSchema.options.map((type) =>
  z
    .object({
      id: z.number().int().describe('Monotonic per session; the SSE id.'),
      type: z.literal(type),
      at: Iso,
      data: EventDataSchemas[type] ?? JsonValueSchema,
    })
    .describe(`The \`${type}\` event.`),
)

export const SessionEventSchema = z.union(
  EventSchemas as unknown as [z.ZodTypeAny, z.ZodTypeAny, ...z.ZodTypeAny[]],
)

// Sent instead of events that are no longer kept: the replay starts at `oldest`.
export const GapFrameSchema = z
  .object({
    after: z.number().int().describe('The Last-Event-ID asked for.'),
    oldest: z.number().int().nullable().describe('The oldest event still kept (null: none).'),
  })
  .describe('SSE frame `event: gap` (no id): events after `after` were dropped by retention.')

// What the `data:` of a frame on the stream is: an event, or the gap notice.
export const SseFrameDataSchema = z.union([SessionEventSchema, GapFrameSchema])
