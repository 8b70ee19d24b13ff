import { z } from 'zod'
import { NetworkEntrySchema } from '../confinement/egress/network-policy.js'

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

// Ops the parent sends to the child.
export const PARENT_OPS = [
  'install-runtime',
  'install-tool',
  'exec',
  'run',
  'run-block',
  'eval',
  'confine',
  'network',
  'disk-budget',
  'stdin',
  'interrupt',
  'close',
] as const
export type ParentOp = (typeof PARENT_OPS)[number]

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

// Values of the parent-op replies the host relies on. The addon answers an interrupt with
// a bare boolean; a JavaScript child with an object.
export const InterruptAck = z.union([
  z.boolean().transform((landed) => ({ landed })),
  z.object({ landed: z.boolean() }).passthrough(),
])
export type InterruptAck = z.infer<typeof InterruptAck>

// Parent → child requests, as the child validates them.
const req = <T extends z.ZodRawShape>(op: string, shape: T) =>
  z.object({ id: MessageId, op: z.literal(op), ...shape }).strict()

export const PARENT_REQUEST_SCHEMAS: Record<string, z.ZodTypeAny> = {
  'install-runtime': req('install-runtime', { config: z.record(z.unknown()) }),
  'install-tool': req('install-tool', { spec: z.record(z.unknown()) }),
  exec: req('exec', { code: z.string() }),
  eval: req('eval', { expr: z.string() }),
  run: req('run', { module: z.string().min(1), fn: z.string().min(1), args: z.array(z.unknown()) }),
  'run-block': req('run-block', { request: z.record(z.unknown()) }),
  confine: req('confine', {
    policy: z.record(z.unknown()),
    seccomp: z.boolean(),
    writable: z.array(z.string().startsWith('/')).default([]),
    audit: z.enum(['enforce', 'permissive']).default('enforce'),
  }),
  interrupt: req('interrupt', { job: MessageId.optional() }),
  // Input for the running block's sys.stdin (`job` names it); `eof` ends its input.
  stdin: req('stdin', { job: MessageId.optional(), data: z.string(), eof: z.boolean().optional() }),
  // Tightens the session's network for the rest of its life; loosening is refused.
  network: req('network', { enabled: z.boolean(), allow: z.array(NetworkEntrySchema).optional() }),
  // Past the session's disk budget: why writes are refused (null: allowed again).
  'disk-budget': req('disk-budget', { refuse: z.string().min(1).nullable() }),
  close: req('close', {}),
}

export const StdinAck = z.object({ buffered: z.number().int().min(0) }).strict()
export type StdinAck = z.infer<typeof StdinAck>
export const NetworkAck = z
  .object({ enabled: z.boolean(), allow: z.array(NetworkEntrySchema), seccomp: z.boolean() })
  .strict()
export type NetworkAck = z.infer<typeof NetworkAck>
