import { z } from 'zod'
import { NetworkEntrySchema } from '../contracts/network-policy.js'
import { MessageId } from './messages.js'
import { GuestBlockOutcome, RunBlockRequest } from './run-block.js'

// Parent → child: every op the host sends a worker, with the parameters it carries and the
// value its reply holds. This table is the one definition: the child validates requests
// against it (PARENT_REQUEST_SCHEMAS), the host's senders are typed by it (ParentParams), and
// replies are read with its `reply` schemas.
const op = <P extends z.ZodRawShape, R extends z.ZodTypeAny>(params: P, reply: R) => ({ params, reply })

// A bare boolean from the addon, an object from a JavaScript child.
export const InterruptAck = z.union([
  z.boolean().transform((landed) => ({ landed })),
  z.object({ landed: z.boolean() }).passthrough(),
])
export type InterruptAck = z.infer<typeof InterruptAck>

export const StdinAck = z.object({ buffered: z.number().int().min(0) }).strict()
export type StdinAck = z.infer<typeof StdinAck>

export const NetworkAck = z
  .object({ enabled: z.boolean(), allow: z.array(NetworkEntrySchema), seccomp: z.boolean() })
  .strict()
export type NetworkAck = z.infer<typeof NetworkAck>

export const ConfineAck = z.object({ audit: z.literal(true), seccomp: z.boolean() }).strict()
export const DiskBudgetAck = z.object({ refusing: z.boolean() }).strict()

export const PARENT_OPS = {
  // The guest runtime's configuration (src/guest/runtime-config.ts) and one tool's spec.
  'install-runtime': op({ config: z.record(z.unknown()) }, z.unknown()),
  'install-tool': op({ spec: z.record(z.unknown()) }, z.unknown()),
  exec: op({ code: z.string() }, z.unknown()),
  eval: op({ expr: z.string() }, z.unknown()),
  run: op({ module: z.string().min(1), fn: z.string().min(1), args: z.array(z.unknown()) }, z.unknown()),
  'run-block': op({ request: RunBlockRequest }, GuestBlockOutcome),
  confine: op(
    {
      // The worker's policy (src/worker/policy.ts WorkerPolicy, which the child parses).
      policy: z.record(z.unknown()),
      seccomp: z.boolean(),
      writable: z.array(z.string().startsWith('/')).default([]),
      audit: z.enum(['enforce', 'permissive']).default('enforce'),
    },
    ConfineAck,
  ),
  interrupt: op({ job: MessageId.optional() }, InterruptAck),
  // Input for the running block's sys.stdin (`job` names it); `eof` ends its input.
  stdin: op({ job: MessageId.optional(), data: z.string(), eof: z.boolean().optional() }, StdinAck),
  // Tightens the session's network for the rest of its life; loosening is refused.
  network: op({ enabled: z.boolean(), allow: z.array(NetworkEntrySchema).optional() }, NetworkAck),
  // Past the session's disk budget: why writes are refused (null: allowed again).
  'disk-budget': op({ refuse: z.string().min(1).nullable() }, DiskBudgetAck),
  close: op({}, z.null()),
} as const

// Served by the worker's interpreter thread, in arrival order (vis-guest/vis_worker/ops.py);
// the child's JavaScript serves the rest.
export const WORK_OPS = ['exec', 'eval', 'run', 'run-block', 'install-tool', 'install-runtime'] as const

type Ops = typeof PARENT_OPS
export type ParentOp = keyof Ops
export const PARENT_OP_NAMES = Object.keys(PARENT_OPS) as ParentOp[]

type ParamsSchema<O extends ParentOp> = z.ZodObject<Ops[O]['params']>
// What a sender passes (defaults may be left out) and what the receiver gets (with them).
export type ParentParams<O extends ParentOp> = z.input<ParamsSchema<O>>
export type ParentRequest<O extends ParentOp> = z.output<ParamsSchema<O>> & { id: number; op: O }
export type ParentReply<O extends ParentOp> = z.output<Ops[O]['reply']>

// Each request as the child validates it: the envelope and the op's parameters, nothing else.
export const PARENT_REQUEST_SCHEMAS = Object.fromEntries(
  PARENT_OP_NAMES.map((name) => [
    name,
    z.object({ id: MessageId, op: z.literal(name), ...PARENT_OPS[name].params }).strict(),
  ]),
) as unknown as { [O in ParentOp]: z.ZodType<ParentRequest<O>, z.ZodTypeDef, unknown> }

// Reads a reply's value as its op's schema says (throws a ZodError on anything else).
export function parseReply<O extends ParentOp>(name: O, value: unknown): ParentReply<O> {
  return PARENT_OPS[name].reply.parse(value) as ParentReply<O>
}
