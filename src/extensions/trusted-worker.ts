import { z } from 'zod'
import type { ExtensionKvRepo } from '../persistence/kv.js'
import { errorMessage, VisError } from '../util/errors.js'
import type { EnterNamespaces } from '../worker/spawn.js'
import { type HostCall, Worker } from '../worker/worker.js'
import { normalizePolicy } from '../worker/worker-policy.js'

export type TrustedWorkerOptions = {
  home: string
  python?: string
  // Serves vis.state; without it the extension's state calls fail with a clear message.
  kv?: ExtensionKvRepo
  // A draft's namespaces: the worker sees the draft where the session's root is.
  enter?: EnterNamespaces
}

const KvCall = z.union([
  z.tuple([z.string(), z.literal('get'), z.string()]),
  z.tuple([z.string(), z.literal('set'), z.string(), z.unknown()]),
  z.tuple([z.string(), z.literal('delete'), z.string()]),
  z.tuple([z.string(), z.literal('keys')]),
])

// What an extension's Python may ask the host: only its own durable state.
function serveKv(kv: ExtensionKvRepo | undefined, call: HostCall): unknown {
  if (call.name !== 'vis.kv') {
    throw new VisError(
      'ext.host-call',
      `trusted extensions cannot call ${JSON.stringify(call.name)} on the host`,
    )
  }
  if (!kv) throw new VisError('ext.no-state', 'this host keeps no extension state (no store was given)')
  const parsed = KvCall.safeParse(call.args)
  if (!parsed.success)
    throw new VisError('ext.bad-state-call', `malformed vis.state call: ${parsed.error.message}`)
  const a = parsed.data
  switch (a[1]) {
    case 'get': {
      const value = kv.get(a[0], a[2])
      return value === undefined ? { found: false } : { found: true, value }
    }
    case 'set':
      kv.set(a[0], a[2], a[3])
      return null
    case 'delete':
      return kv.delete(a[0], a[2])
    case 'keys':
      return kv.list(a[0]).map((e) => e.key)
  }
}

// The wire names a Python exception "<module>.<fn>() raised <Type>: <message>"; people and
// the model need only the part after "raised".
export function pythonReason(err: unknown): string {
  return errorMessage(err).replace(/^[\w.]+\(\) raised /, '')
}

// A worker process for trusted Python: no OS jail, no audit hook, no sandbox runtime.
// It runs the user's own extensions, which the model reaches only through the host.
export class TrustedWorker {
  private constructor(readonly worker: Worker) {}

  static async start(opts: TrustedWorkerOptions): Promise<TrustedWorker> {
    const worker = await Worker.start({
      home: opts.home,
      python: opts.python,
      policy: normalizePolicy({}),
      trusted: true,
      ...(opts.enter ? { enter: opts.enter } : {}),
    })
    worker.setHostHandler(async (call) => serveKv(opts.kv, call))
    return new TrustedWorker(worker)
  }

  get pid(): number {
    return this.worker.pid
  }

  get alive(): boolean {
    return this.worker.alive
  }

  // module.fn(*args) in the trusted interpreter; arguments and result are JSON. An abort
  // interrupts the Python call; a call that cannot be interrupted retires the worker.
  async call(module: string, fn: string, args: unknown[], signal?: AbortSignal): Promise<unknown> {
    signal?.throwIfAborted()
    const started = this.worker.send('run', { module, fn, args })
    const onAbort = () => void this.worker.interrupt(started.id).catch(() => undefined)
    signal?.addEventListener('abort', onAbort, { once: true })
    try {
      return await started.reply
    } finally {
      signal?.removeEventListener('abort', onAbort)
    }
  }

  // Kills the worker now: for Python that will not return.
  retire(reason: string): void {
    this.worker.retire(reason)
  }

  close(): Promise<void> {
    return this.worker.close()
  }
}
