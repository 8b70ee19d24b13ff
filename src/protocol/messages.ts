import { z } from 'zod'

// The wire's three message kinds (docs/ARCHITECTURE.md "Processes and the wire").
// A request carries `id` and `op`, a reply carries `id` and `ok` but never `op`,
// a notification carries `op` and no `id`.

export const MessageId = z.number().int().positive().max(Number.MAX_SAFE_INTEGER)

export const WireError = z
  .object({
    code: z.string().min(1),
    message: z.string(),
  })
  .passthrough()
export type WireError = z.infer<typeof WireError>

export const RequestEnvelope = z.object({ id: MessageId, op: z.string().min(1) }).passthrough()
export type RequestEnvelope = z.infer<typeof RequestEnvelope>

export const OkReply = z.object({ id: MessageId, ok: z.literal(true), value: z.unknown() }).strict()
export const ErrReply = z.object({ id: MessageId, ok: z.literal(false), error: WireError }).strict()
export const Reply = z.discriminatedUnion('ok', [OkReply, ErrReply])
export type Reply = z.infer<typeof Reply>

export const NotificationEnvelope = z.object({ op: z.string().min(1) }).passthrough()
export type NotificationEnvelope = z.infer<typeof NotificationEnvelope>

export type Incoming =
  | { kind: 'request'; msg: RequestEnvelope }
  | { kind: 'reply'; msg: Reply }
  | { kind: 'notification'; msg: NotificationEnvelope }

// Child → parent: one request op (a tool call) and one notification (streamed output).
export const HostCallRequest = z
  .object({
    id: MessageId,
    op: z.literal('host'),
    name: z.string().min(1).max(256),
    args: z.array(z.unknown()),
  })
  .strict()
export type HostCallRequest = z.infer<typeof HostCallRequest>

export const OutputNotification = z
  .object({
    op: z.literal('output'),
    job: MessageId,
    stream: z.enum(['stdout', 'stderr']),
    data: z.string(),
  })
  .strict()
export type OutputNotification = z.infer<typeof OutputNotification>

export const CHILD_REQUEST_SCHEMAS: Record<string, z.ZodTypeAny> = { host: HostCallRequest }
export const CHILD_NOTIFICATION_SCHEMAS: Record<string, z.ZodTypeAny> = { output: OutputNotification }
