// The helper process: one per session. It loads the embedded interpreter (Python runs on
// the addon's own thread) and serves the parent's ops over the inherited socket on fd 3.
// Its stdout/stderr are the worker's log file, never the wire.
import { Socket } from 'node:net'
import { startEgressForwarderFromEnv } from '../confinement/egress/forwarder.js'
import { installSeccomp } from '../confinement/seccomp.js'
import { loadPython, type Outcome, type PythonRuntime } from '../native/index.js'
import { Channel, toWireError } from '../protocol/channel.js'
import { RawJson } from '../protocol/framing.js'
import { PARENT_REQUEST_SCHEMAS } from '../protocol/messages.js'
import { errorMessage, VisError } from '../util/errors.js'
import { toNativePolicy } from './native-policy.js'
import { WorkerPolicy } from './policy.js'

const GUEST_API = 'vis_guest.api'

function log(line: string): void {
  process.stderr.write(`${new Date().toISOString()} [child ${process.pid}] ${line}\n`)
}

const socket = new Socket({ fd: 3, readable: true, writable: true })
// With network on, the jail's only way out is this relay to the host's egress proxy; it
// must listen before seccomp closes the door on new sockets.
const forwarding = startEgressForwarderFromEnv().catch((err: unknown) => {
  log(`egress forwarder failed: ${errorMessage(err)}`)
})
// A trusted extension worker runs the user's own Python as python3 would: no audit hook.
const pythonLoading = loadPython({
  minor: process.env.VIS_PYTHON_VERSION || undefined,
  audit: process.env.VIS_WORKER_TRUSTED !== '1',
})
pythonLoading.catch((err: unknown) => log(`python failed to load: ${errorMessage(err)}`))

// Native job id → the wire id of the request it serves: output notifications and
// interrupts are addressed by wire id.
const wireIdOf = new Map<number, number>()
const nativeJobOf = new Map<number, number>()

async function job<T>(id: number, submit: (py: PythonRuntime) => Promise<T> & { job: number }): Promise<T> {
  const py = await pythonLoading
  const p = submit(py)
  wireIdOf.set(p.job, id)
  nativeJobOf.set(id, p.job)
  try {
    return await p
  } finally {
    wireIdOf.delete(p.job)
    nativeJobOf.delete(id)
  }
}

// A Python exception in exec/eval is a successful reply carrying the failed outcome;
// only the transport fails a request.
function outcome(o: Outcome): unknown {
  return o.ok
    ? { ok: true, value: o.value ?? null, ...(o.repr ? { repr: true } : {}) }
    : { ok: false, error: o.error }
}

function callGuest(id: number, fn: string, arg: unknown): Promise<RawJson> {
  return job(id, (py) => py.call(GUEST_API, fn, JSON.stringify([arg]))).then((t) => new RawJson(t))
}

const channel: Channel = new Channel(socket, {
  name: `worker ${process.pid}`,
  log,
  requests: PARENT_REQUEST_SCHEMAS,
  onRequest: (op, msg) => serve(op, msg),
  onClose: () => {
    // The parent is gone (or closed us): nothing may outlive it.
    process.exit(0)
  },
})

async function serve(op: string, msg: any): Promise<unknown> {
  const id: number = msg.id
  switch (op) {
    case 'install-runtime':
      return callGuest(id, 'install_runtime', msg.config)
    case 'install-tool':
      return callGuest(id, 'install_tool', msg.spec)
    case 'run-block':
      return callGuest(id, 'run_block', msg.request)
    case 'run':
      return new RawJson(await job(id, (py) => py.call(msg.module, msg.fn, JSON.stringify(msg.args))))
    case 'exec':
      return outcome(await job(id, (py) => py.exec(msg.code)))
    case 'eval':
      return outcome(await job(id, (py) => py.eval(msg.expr)))
    case 'confine': {
      const py = await pythonLoading
      await forwarding
      const policy = WorkerPolicy.parse(msg.policy)
      py.installPolicy(toNativePolicy(policy, py.distribution.root, msg.writable))
      // seccomp covers every thread (TSYNC); a worker that cannot verify it refuses work.
      const seccomp = msg.seccomp
        ? installSeccomp({ processes: policy.shell, network: policy.network.enabled })
        : undefined
      return { audit: true, seccomp: seccomp !== undefined }
    }
    case 'interrupt': {
      // Answered at once, never queued behind the work it interrupts.
      const py = await pythonLoading
      const target = msg.job === undefined ? undefined : nativeJobOf.get(msg.job)
      if (msg.job !== undefined && target === undefined) return { landed: false }
      return { landed: py.interrupt(target) }
    }
    case 'close':
      setImmediate(() => {
        void pythonLoading
          .then((py) => py.close())
          .catch(() => 0)
          .finally(() => process.exit(0))
      })
      return null
    default:
      throw new VisError('protocol.unknown-op', `unknown op ${op}`)
  }
}

// A failed load is reported through the replies (every op fails with its error).
void pythonLoading.then(
  (py) => {
    py.onOutput((nativeJob, stream, data) => {
      const wire = wireIdOf.get(nativeJob)
      if (wire !== undefined) channel.notify('output', { job: wire, stream, data })
    })
    py.onHostCall(async (name, argsJson, signal) => {
      const started = channel.start('host', { name, args: new RawJson(argsJson) })
      const onAbort = () =>
        channel.cancel(started.id, new VisError('worker.interrupted', 'the call was interrupted'))
      signal.addEventListener('abort', onAbort, { once: true })
      try {
        return JSON.stringify({ ok: true, value: await started.reply })
      } catch (err) {
        return JSON.stringify({ ok: false, error: toWireError(err) })
      } finally {
        signal.removeEventListener('abort', onAbort)
      }
    })
  },
  () => undefined,
)
