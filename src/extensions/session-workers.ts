import type { ExtensionKvRepo } from '../persistence/kv.js'
import type { EnterNamespaces } from '../worker/spawn.js'
import { TrustedWorker } from './trusted-worker.js'

// The namespaces of a session's draft, undefined on the trunk.
export type DraftNamespaces = (sessionId: string) => Promise<EnterNamespaces | undefined>

const MODULE = 'vis_ext.extensions'

// What a session worker needs to realise one extension version.
export type RealiseSpec = {
  key: string
  scope: string
  kind: 'file' | 'package'
  path: string
  dir: string
  source: string
  sha: string
  // Paths (written and real) of the home's extension entries left out as sandbox-writable: the
  // worker refuses to import a helper from them (vis_ext/extensions.py).
  refused?: string[]
}

// One session's trusted worker: started on the first call into any extension, it realises
// each extension at the version the registry holds, and runs one call per extension at a time.
class SessionWorker {
  private worker: Promise<TrustedWorker> | undefined
  private readonly realised = new Map<string, string>()
  private readonly tails = new Map<string, Promise<unknown>>()

  constructor(
    private readonly sessionId: string,
    private readonly opts: SessionWorkersOptions,
  ) {}

  private started(): Promise<TrustedWorker> {
    const current = this.worker
    if (current) {
      // A worker that died is replaced; its realised extensions went with it.
      return current.then((w) => (w.alive ? w : this.restart()))
    }
    return this.restart()
  }

  private restart(): Promise<TrustedWorker> {
    this.realised.clear()
    // In a draft the worker lives in the draft's mount namespace: the extension's hooks
    // and tools read and write the draft where the root is, by any path. Switching trunk
    // <-> draft ends this worker (Engine.replaceWorker), so it never outlives its view.
    const p = (this.opts.draftNamespaces?.(this.sessionId) ?? Promise.resolve(undefined)).then((enter) =>
      TrustedWorker.start({
        home: this.opts.home,
        python: this.opts.python,
        kv: this.opts.kv,
        ...(enter ? { enter } : {}),
      }),
    )
    this.worker = p
    p.catch(() => {
      if (this.worker === p) this.worker = undefined
    })
    return p
  }

  async pid(): Promise<number> {
    return (await this.started()).pid
  }

  // Runs fn after every earlier call into the same extension in this session.
  serial<T>(key: string, fn: (w: TrustedWorker) => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve()
    const run = prev.then(async () => fn(await this.started()))
    const tail = run.catch(() => undefined)
    this.tails.set(key, tail)
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key)
    })
    return run
  }

  async ensure(w: TrustedWorker, dirs: string[], spec: RealiseSpec): Promise<void> {
    if (this.realised.get(spec.key) === spec.sha) return
    await w.call(MODULE, 'realise', [dirs, spec, this.opts.project ?? null])
    this.realised.set(spec.key, spec.sha)
  }

  async close(): Promise<void> {
    const w = this.worker
    this.worker = undefined
    if (w) await w.then((x) => x.close()).catch(() => undefined)
  }
}

type SessionWorkersOptions = {
  home: string
  python?: string
  kv?: ExtensionKvRepo
  project?: string
  draftNamespaces?: DraftNamespaces
}

export class SessionWorkers {
  private readonly bySession = new Map<string, SessionWorker>()

  constructor(private readonly opts: SessionWorkersOptions) {}

  // Where sessions in a draft start their workers (set by the engine that owns the drafts).
  followDrafts(namespaces: DraftNamespaces): void {
    this.opts.draftNamespaces = namespaces
  }

  for(sessionId: string): SessionWorker {
    let sw = this.bySession.get(sessionId)
    if (!sw) {
      sw = new SessionWorker(sessionId, this.opts)
      this.bySession.set(sessionId, sw)
    }
    return sw
  }

  has(sessionId: string): boolean {
    return this.bySession.has(sessionId)
  }

  async end(sessionId: string): Promise<void> {
    const sw = this.bySession.get(sessionId)
    this.bySession.delete(sessionId)
    await sw?.close()
  }

  async closeAll(): Promise<void> {
    const all = [...this.bySession.values()]
    this.bySession.clear()
    await Promise.all(all.map((sw) => sw.close()))
  }
}
