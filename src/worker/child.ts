// The helper process: one per session. It loads the embedded interpreter and puts it in
// wire mode: the addon's own reader thread owns the inherited socket (fd 3), work ops go
// straight to the interpreter thread (vis_worker.ops.handle answers them) and their
// replies, output and host calls are written from C++. This JavaScript only bootstraps
// and serves the control ops the addon hands over (confine, close).
// Its stdout/stderr are the worker's log file, never the wire.
import { startEgressForwarderFromEnv } from '../confinement/egress/forwarder.js'
import { nodeNet } from '../confinement/egress/node-net.js'
import { installSeccomp } from '../confinement/seccomp.js'
import { loadPython, type PythonRuntime } from '../native/index.js'
import { Channel, type ChannelOptions } from '../protocol/channel.js'
import { DEFAULT_MAX_DEPTH, DEFAULT_MAX_FRAME_CHARS } from '../protocol/framing.js'
import { RequestEnvelope } from '../protocol/messages.js'
import {
  PARENT_OP_NAMES,
  PARENT_REQUEST_SCHEMAS,
  type ParentReply,
  type ParentRequest,
  WORK_OPS,
} from '../protocol/parent-requests.js'
import { errorMessage, VisError } from '../util/errors.js'
import { permissiveNativePolicy, toNativePolicy } from './native-policy.js'
import { networkLoosening, tightenedNetwork, WorkerPolicy } from './worker-policy.js'

// Served here, on the JavaScript thread; the rest of the parent's ops are the addon's own.
const CONTROL_OPS = ['confine', 'network', 'disk-budget', 'close'] as const
type ControlOp = (typeof CONTROL_OPS)[number]
const HANDLER = { module: 'vis_worker.ops', fn: 'handle' }

function log(line: string): void {
  process.stderr.write(`${new Date().toISOString()} [child ${process.pid}] ${line}\n`)
}

// With network on, the jail's only way out is this relay to the host's egress proxy; it
// must listen before seccomp closes the door on new sockets.
const forwarding = startEgressForwarderFromEnv().catch((err: unknown) => {
  log(`egress forwarder failed: ${errorMessage(err)}`)
  return undefined
})

// A jailed worker with the network on goes out only through the host's egress proxy.
const egressProxy = process.env.VIS_EGRESS_SOCKET !== undefined

// What `confine` installed; `network` may only tighten it.
let confined: { policy: WorkerPolicy; seccomp: boolean; writable: string[]; permissive: boolean } | undefined

const channelOptions = (serve: ChannelOptions['onRequest']): ChannelOptions => ({
  name: `worker ${process.pid}`,
  log,
  requests: Object.fromEntries(CONTROL_OPS.map((op) => [op, PARENT_REQUEST_SCHEMAS[op]])),
  onRequest: serve,
  onClose: () => process.exit(0),
})

// `audit: 'permissive'`: the attack suite's kernel-only proof (WorkerOptions.auditPolicy).
async function confine(py: PythonRuntime, msg: ParentRequest<'confine'>): Promise<ParentReply<'confine'>> {
  await forwarding
  const policy = WorkerPolicy.parse(msg.policy)
  py.installPolicy(
    msg.audit === 'permissive'
      ? permissiveNativePolicy()
      : toNativePolicy(policy, py.distribution.root, msg.writable, { egressProxy }),
  )
  // seccomp covers every thread (TSYNC); a worker that cannot verify it refuses work.
  if (msg.seccomp) installSeccomp({ processes: policy.shell, network: policy.network.enabled })
  confined = { policy, seccomp: msg.seccomp, writable: msg.writable, permissive: msg.audit === 'permissive' }
  return { audit: true, seccomp: msg.seccomp }
}

// Tightens the network for the rest of the session: the audit policy always; turned off,
// also the OS side (the egress relay closes with its open connections, and a stacked
// seccomp filter refuses new inet sockets). Loosening is refused: that needs a new worker.
async function network(py: PythonRuntime, msg: ParentRequest<'network'>): Promise<ParentReply<'network'>> {
  if (!confined) throw new VisError('worker.not-confined', 'the worker has no policy yet to tighten')
  const cur = confined.policy.network
  const why = networkLoosening(cur, msg)
  if (why) {
    throw new VisError(
      'worker.network-loosen',
      `the session's network can only be tightened: ${why}; create a new session for more access`,
      { op: 'network' },
    )
  }
  const next: WorkerPolicy = { ...confined.policy, network: tightenedNetwork(cur, msg) }
  // A permissive audit hook (the attack suite's kernel-only proof) stays permissive.
  if (!confined.permissive)
    py.installPolicy(toNativePolicy(next, py.distribution.root, confined.writable, { egressProxy }))
  let seccomp = false
  if (!msg.enabled && cur.enabled) {
    await (await forwarding)?.close()
    if (confined.seccomp) {
      installSeccomp({ processes: next.shell, network: false })
      seccomp = true
    }
  }
  confined.policy = next
  return { enabled: next.network.enabled, allow: next.network.allow, seccomp }
}

// The session went past (or back under) its disk budget: the audit hook refuses writes that
// could grow the roots meanwhile. A permissive hook (the kernel-only proof) stays permissive.
function diskBudget(py: PythonRuntime, msg: ParentRequest<'disk-budget'>): ParentReply<'disk-budget'> {
  const refusing = confined !== undefined && !confined.permissive && msg.refuse !== null
  py.refuseWrites(refusing ? (msg.refuse ?? undefined) : undefined)
  return { refusing }
}

function serveWire(py: PythonRuntime): void {
  const channel: Channel = new Channel(
    {
      write: (text) => py.wireWrite(text.endsWith('\n') ? text.slice(0, -1) : text),
      end: () => undefined,
    },
    // The channel has checked `msg` against PARENT_REQUEST_SCHEMAS[op] before this runs.
    channelOptions((op, msg) => {
      const control = op as ControlOp
      if (control === 'confine') return confine(py, msg as ParentRequest<'confine'>)
      if (control === 'network') return network(py, msg as ParentRequest<'network'>)
      if (control === 'disk-budget') return diskBudget(py, msg as ParentRequest<'disk-budget'>)
      // close: reply first, then finalize Python (atexit, flushing) and leave.
      setImmediate(() => {
        void py
          .close()
          .catch(() => 0)
          .finally(() => process.exit(0))
      })
      return null
    }),
  )
  py.startWire({
    fd: 3,
    workOps: [...WORK_OPS],
    handler: HANDLER,
    // The caps the parent's Channel applies: a host call past them is refused in Python
    // (catchable, worker kept) instead of being sent and costing the worker.
    limits: { maxFrameChars: DEFAULT_MAX_FRAME_CHARS, maxDepth: DEFAULT_MAX_DEPTH },
    // Set by the parent (Worker option spinUs), already validated there.
    spinUs: Number(process.env.VIS_WIRE_SPIN_US ?? 0),
    onMessage: (line) => channel.receiveLine(line),
    onClose: (why) => {
      // The parent is gone (or closed us): nothing may outlive it.
      if (why !== 'eof') log(`wire closed: ${why}`)
      process.exit(0)
    },
  })
}

// Without an interpreter there is nothing to serve: every request fails with the reason.
function serveLoadFailure(err: unknown): void {
  const reason = new VisError(
    err instanceof VisError ? err.code : 'worker.python',
    `the worker could not load Python: ${errorMessage(err)}`,
  )
  const any = RequestEnvelope
  const requests = Object.fromEntries(PARENT_OP_NAMES.map((op) => [op, any]))
  Channel.overSocket(new (nodeNet().Socket)({ fd: 3, readable: true, writable: true }), {
    ...channelOptions(() => {
      throw reason
    }),
    requests,
  })
}

// A trusted extension worker (Worker option `trusted`) runs the user's own Python as
// python3 would: no audit hook.
const audit = process.env.VIS_WORKER_TRUSTED !== '1'
loadPython({ minor: process.env.VIS_PYTHON_VERSION || undefined, audit }).then(serveWire, (err: unknown) => {
  log(`python failed to load: ${errorMessage(err)}`)
  serveLoadFailure(err)
})
