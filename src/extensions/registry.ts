import { resolve } from 'node:path'
import type { Store } from '../persistence/store.js'
import type { Json, Tool, ToolContext } from '../tools/types.js'
import { VisError } from '../util/errors.js'
import { visHome } from '../util/home.js'
import { readHomeFile } from '../util/home-files.js'
import { realish } from '../util/real-path.js'
import { type Discovery, discoverExtensions, type ExtensionSource, extensionDirs } from './discover.js'
import { type ExtensionManifest, HookAnswer, LoadResult } from './manifest.js'
import { exposedDirs, jailMasks } from './masks.js'
import { exclusive, registrationWorker } from './registration.js'
import { type DraftNamespaces, type RealiseSpec, SessionWorkers } from './session-workers.js'
import { pythonReason, type TrustedWorker } from './trusted-worker.js'

const MODULE = 'vis_ext.extensions'
// An extension's registering file larger than this is not loaded.
const MAX_SOURCE_BYTES = 16 * 1024 * 1024

// Importing an extension file is work, but a file that never finishes must not stall startup.
export const DEFAULT_LOAD_TIMEOUT_MS = 30_000

type RealiseSpecBase = Omit<RealiseSpec, 'source' | 'sha'>

export type LoadedExtension = ExtensionSource & {
  manifest: ExtensionManifest
  sha: string
  source: string
  loadedAt: number
}

export type ExtensionWarning = {
  key: string
  path: string
  scope: ExtensionSource['scope']
  reason: string
  // A reload failed and the version loaded before keeps working.
  keptPrevious?: boolean
  // Set when the warning has a catalogued code (the project folder not trusted).
  code?: 'ext.project-untrusted' | 'ext.source-writable'
}

export type RegistryOptions = {
  home?: string
  project?: string
  python?: string
  // Where vis.state lives; without it extensions have no durable state.
  store?: Store
  loadTimeoutMs?: number
}

// Minimal view of a session the registry binds into (src/sessions' Session fits).
export type BindableSession = {
  id: string
  roots: string[]
  // Directories its jail masks (WorkerPolicy.hidden).
  hidden?: string[]
  bindTool(tool: Tool): Promise<void>
  // Calls into the sandbox's interpreter (to install the extensions' sandbox modules).
  callModule?(module: string, fn: string, args: unknown[]): Promise<unknown>
}

// The host's view of the user's Python extensions: what loaded, what did not and why, and
// their tools in the same Tool shape as the built-in ones. Tools run in each session's own
// trusted worker, never in the sandbox and never in the shared registration worker.
export class ExtensionRegistry {
  readonly home: string
  readonly project: string | undefined
  private readonly python: string | undefined
  private loaded = new Map<string, LoadedExtension>()
  private problems: ExtensionWarning[] = []
  private discovery: Discovery = { dirs: [], sources: [], shadowed: [], refused: [] }
  private readonly sessions: SessionWorkers
  private reloading: Promise<void> | undefined
  private readonly loadTimeoutMs: number

  private constructor(opts: RegistryOptions) {
    this.home = visHome(opts.home)
    this.project = opts.project
    this.python = opts.python
    this.loadTimeoutMs = opts.loadTimeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS
    this.sessions = new SessionWorkers({
      home: this.home,
      python: opts.python,
      kv: opts.store?.kv,
      project: opts.project,
    })
  }

  // Discovers and loads every extension (failures become warnings).
  static async open(opts: RegistryOptions = {}): Promise<ExtensionRegistry> {
    const r = new ExtensionRegistry(opts)
    await r.reload()
    return r
  }

  // Loads every file again. A file that fails keeps its previous good version, if any.
  reload(): Promise<void> {
    const run = (this.reloading ?? Promise.resolve()).then(() => this.loadAll())
    this.reloading = run.catch(() => undefined)
    return run
  }

  private async loadAll(): Promise<void> {
    const discovery = discoverExtensions({ home: this.home, project: this.project })
    const specs = discovery.sources.map((s) => ({
      key: s.key,
      scope: s.scope,
      kind: s.kind,
      path: s.path,
      dir: s.dir,
      ...this.readSource(s.path),
      refused: this.refusedPaths(discovery),
    }))
    const results = await exclusive(() => this.loadEach(discovery.dirs, specs))
    const next = new Map<string, LoadedExtension>()
    const problems: ExtensionWarning[] = []
    const names = new Map<string, string>()
    const aliases = new Map<string, string>()
    const now = Date.now()
    discovery.sources.forEach((src, i) => {
      const r = results[i]!
      const warn = (reason: string, keptPrevious?: boolean) =>
        problems.push({
          key: src.key,
          path: src.path,
          scope: src.scope,
          reason,
          ...(keptPrevious ? { keptPrevious } : {}),
        })
      let ext: LoadedExtension | undefined
      const refusedNow = specs[i]!.notRead !== undefined
      if (refusedNow) {
        // Not even the version loaded before: its package's helpers are read from the same place.
        problems.push({
          key: src.key,
          path: src.path,
          scope: src.scope,
          reason: r.ok ? '' : r.error,
          code: 'ext.source-writable',
        })
        this.loud(src.path, r.ok ? '' : r.error)
      } else if (r.ok) {
        ext = { ...src, manifest: r.manifest, sha: r.sha, source: r.source, loadedAt: now }
      } else {
        const prev = this.loaded.get(src.key)
        // The same file of the same folder: by scope and kind, since a project's path names the
        // trusted copy (trust.ts), which is a new folder whenever the content changed.
        if (prev && prev.scope === src.scope && prev.kind === src.kind) {
          warn(`${r.error}; the version loaded before keeps working`, true)
          ext = prev
        } else warn(r.error)
      }
      if (!ext) return
      // Sources are ordered global then project: a later clash is decided for the project.
      const m = ext.manifest
      const clashes = [
        ...new Set([names.get(m.name), aliases.get(m.alias)].filter((k): k is string => k !== undefined)),
      ].map((k) => next.get(k)!)
      const what = (o: LoadedExtension) =>
        o.manifest.name === m.name ? `name ${JSON.stringify(m.name)}` : `alias ${JSON.stringify(m.alias)}`
      const kept = clashes.find((o) => !(src.scope === 'project' && o.scope === 'global'))
      if (kept) {
        warn(`${what(kept)} is already used by ${kept.path}`)
        return
      }
      for (const o of clashes) {
        next.delete(o.key)
        names.delete(o.manifest.name)
        aliases.delete(o.manifest.alias)
        problems.push({
          key: o.key,
          path: o.path,
          scope: o.scope,
          reason: `${what(o)} is also used by project extension ${src.path}, which wins`,
        })
      }
      next.set(ext.key, ext)
      names.set(ext.manifest.name, ext.key)
      aliases.set(ext.manifest.alias, ext.key)
    })
    for (const f of discovery.refused) {
      problems.push({
        key: f.key,
        path: f.path,
        scope: f.scope,
        reason: f.reason,
        code: 'ext.source-writable',
      })
      this.loud(f.path, f.reason)
    }
    if (discovery.blocked) {
      problems.unshift({
        key: '.vis/extensions',
        path: discovery.blocked.dir,
        scope: 'project',
        reason: discovery.blocked.reason,
        code: 'ext.project-untrusted',
      })
    }
    this.discovery = discovery
    this.loaded = next
    this.problems = problems
  }

  // One file at a time, each within a bound: a file that never finishes importing is retired
  // with its worker and reported, and the rest load in a fresh one.
  // The registering file's text, read by the host and judged on the open file (home-files.ts): the
  // worker executes exactly these bytes, so a link turned into a session's root after discovery
  // looked is refused here, not imported. `notRead` says why it was not read.
  private readSource(path: string): { source?: string; notRead?: string } {
    try {
      const source = readHomeFile(this.home, path, 'ext.source-writable', 'ext.load', MAX_SOURCE_BYTES)
      return source === undefined ? {} : { source }
    } catch (err) {
      if (err instanceof VisError && err.code === 'ext.source-writable') return { notRead: err.message }
      return {}
    }
  }

  // Said on stderr as well as in the warnings: the person linked it there and expects it to load.
  private loud(path: string, reason: string): void {
    process.stderr.write(`vis: extension ${path} skipped (ext.source-writable): ${reason}\n`)
  }

  private async loadEach(
    dirs: string[],
    specs: (RealiseSpecBase & { source?: string; notRead?: string })[],
  ): Promise<LoadResult[]> {
    const out: LoadResult[] = []
    let worker: TrustedWorker | undefined
    for (const { notRead, ...spec } of specs) {
      if (notRead !== undefined) {
        out.push({ ok: false, error: notRead })
        continue
      }
      if (!worker?.alive) {
        worker = await registrationWorker(this.home, this.python)
        await worker.call(MODULE, 'prepare', [dirs])
      }
      const ac = new AbortController()
      const timer = setTimeout(() => ac.abort(), this.loadTimeoutMs)
      try {
        out.push(LoadResult.parse(await worker.call(MODULE, 'load_one', [spec], ac.signal)))
      } catch (err) {
        if (!ac.signal.aborted) throw err
        worker.retire(`${spec.path} did not finish loading`)
        out.push({ ok: false, error: `loading did not finish within ${this.loadTimeoutMs} ms` })
      } finally {
        clearTimeout(timer)
      }
    }
    return out
  }

  list(): LoadedExtension[] {
    return [...this.loaded.values()]
  }

  get(name: string): LoadedExtension | undefined {
    return this.list().find((e) => e.manifest.name === name || e.key === name)
  }

  // Files that failed to load (and why): for `vis ext list` and `vis doctor`.
  warnings(): ExtensionWarning[] {
    return [...this.problems]
  }

  shadowed(): ExtensionSource[] {
    return [...this.discovery.shadowed]
  }

  get dirs(): string[] {
    return [...this.discovery.dirs]
  }

  // Sessions in a draft get their trusted worker in the draft's namespaces: extension
  // tools and hooks see and write the draft (src/drafts).
  followDrafts(namespaces: DraftNamespaces): void {
    this.sessions.followDrafts(namespaces)
  }

  // The pid of a session's trusted extension worker, starting it if needed.
  sessionWorkerPid(sessionId: string): Promise<number> {
    return this.sessions.for(sessionId).pid()
  }

  private spec(ext: LoadedExtension): RealiseSpec {
    return {
      key: ext.key,
      scope: ext.scope,
      kind: ext.kind,
      path: ext.path,
      dir: ext.dir,
      source: ext.source,
      sha: ext.sha,
      refused: this.refusedPaths(this.discovery),
    }
  }

  private refusedPaths(d: Discovery): string[] {
    return [...new Set(d.refused.flatMap((f) => [f.path, realish(f.path)]))]
  }

  // Runs vis_ext.extensions.<fn>(key, ...) in the session's worker at the current version.
  private async inSession(
    sessionId: string,
    key: string,
    fn: string,
    args: unknown[],
    signal?: AbortSignal,
  ): Promise<unknown> {
    const sw = this.sessions.for(sessionId)
    return sw.serial(key, async (w) => {
      const ext = this.loaded.get(key)
      if (!ext) throw new VisError('ext.gone', `extension ${key} is no longer loaded`, { sessionId })
      await sw.ensure(w, this.discovery.dirs, this.spec(ext))
      return w.call(MODULE, fn, [key, ...args], signal)
    })
  }

  private callable(ext: LoadedExtension, kind: 'tool' | 'slash', name: string) {
    return async (
      args: unknown[],
      ctx: Pick<ToolContext, 'sessionId'> & { signal?: AbortSignal },
    ): Promise<Json> => {
      try {
        return (await this.inSession(ctx.sessionId, ext.key, 'call', [kind, name, args], ctx.signal)) as Json
      } catch (err) {
        if (err instanceof VisError && err.code !== 'python.exception') throw err
        throw new VisError('ext.tool-failed', `${ext.manifest.alias}_${name}: ${pythonReason(err)}`, {
          sessionId: ctx.sessionId,
          extension: ext.manifest.name,
          tool: name,
        })
      }
    }
  }

  // One extension's tools, named <alias>_<name>, with their Python signatures.
  toolsOf(name: string): Tool[] {
    const ext = this.get(name)
    if (!ext) return []
    return ext.manifest.tools.map((t) => {
      const tool: Tool = {
        name: `${ext.manifest.alias}_${t.name}`,
        doc: t.doc,
        signature: t.signature,
        run: this.callable(ext, 'tool', t.name),
      }
      return this.withHooks(tool)
    })
  }

  // Every loaded extension's tools.
  tools(): Tool[] {
    return this.list().flatMap((e) => this.toolsOf(e.manifest.name))
  }

  // A host tool with the extensions' op hooks around it: before-hooks may refuse the call,
  // after-hooks see the result and may withhold it. Hooks are looked up at call time, so a
  // reload changes them for tools bound earlier.
  // `unapproved`: the tool is bound in a read-only or review session without approval (it had
  // no hooks then); a hook found at call time (a reload added it) refuses the call instead of
  // running outside the sandbox unasked.
  withHooks(tool: Tool, unapproved = false): Tool {
    const run = async (args: unknown[], ctx: ToolContext): Promise<Json> => {
      await this.runHooks('before', tool.name, args, null, ctx, unapproved)
      const result = await tool.run(args, ctx)
      await this.runHooks('after', tool.name, args, result, ctx, unapproved)
      return result
    }
    return { ...tool, run }
  }

  // The host tools some extension's op hooks are on.
  hookedTools(): Set<string> {
    return new Set(this.list().flatMap((e) => e.manifest.op_hooks.map((h) => h.tool)))
  }

  private async runHooks(
    when: 'before' | 'after',
    toolName: string,
    args: unknown[],
    result: Json,
    ctx: Pick<ToolContext, 'sessionId' | 'signal'>,
    unapproved: boolean,
  ): Promise<void> {
    const { sessionId } = ctx
    for (const ext of this.list()) {
      for (const h of ext.manifest.op_hooks) {
        if (h.when !== when || h.tool !== toolName) continue
        if (unapproved) {
          throw new VisError(
            'ext.hook-not-approved',
            `${toolName}: the ${when}-hook of extension ${ext.manifest.name} runs outside the sandbox, and this session is read-only or in review; it was loaded after ${toolName} was bound without approval, so the call is refused. Start a new session to have ${toolName} ask for approval, or use a workspace session.`,
            { sessionId, extension: ext.manifest.name, tool: toolName },
          )
        }
        let answer: HookAnswer
        try {
          answer = HookAnswer.parse(
            await this.inSession(sessionId, ext.key, 'hook', [h.index, args, result], ctx.signal),
          )
        } catch (err) {
          throw new VisError(
            'ext.hook-failed',
            `${toolName}: the ${when}-hook of extension ${ext.manifest.name} failed: ${pythonReason(err)}`,
            {
              sessionId,
              extension: ext.manifest.name,
              tool: toolName,
            },
          )
        }
        if (answer.refused !== null) {
          throw new VisError(
            'ext.refused',
            `${toolName} was refused by extension ${ext.manifest.name}: ${answer.refused}`,
            {
              sessionId,
              extension: ext.manifest.name,
              tool: toolName,
            },
          )
        }
      }
    }
  }

  // Extension directories (existing or not) a sandbox with these roots could reach: code
  // written there would run unconfined at the next reload.
  exposedDirs(roots: string[]): string[] {
    return exposedDirs(this.extensionDirPaths(), roots)
  }

  private extensionDirPaths(): string[] {
    const d = extensionDirs({ home: this.home, project: this.project })
    return [d.global, ...(d.project ? [d.project] : [])].map((p) => resolve(p))
  }

  // The directories the jail must mask for a sandbox with these roots (WorkerPolicy.hidden),
  // missing ones created first; roots that cannot be masked are refused (masks.ts).
  maskFor(roots: string[], sessionId?: string): string[] {
    return this.masks(roots, sessionId, true)
  }

  private masks(roots: string[], sessionId: string | undefined, create: boolean): string[] {
    return jailMasks(this.extensionDirPaths(), roots, sessionId, create)
  }

  // Binds every extension tool, and the given host tools wrapped with op hooks, into a
  // session. A host tool's name wins over an extension tool of the same name. Refused unless
  // the session's jail masks every extension directory inside its roots (spawn it with
  // `hidden: registry.maskFor(roots)`), and for roots that cannot be masked.
  // `gated` (a read-only or review session, src/engine/mode-gate.ts): a host tool with hooks
  // waits for approval at each call, since its hooks run outside the jail.
  async bindInto(
    session: BindableSession,
    hostTools: Tool[] = [],
    opts: { gated?: boolean } = {},
  ): Promise<string[]> {
    const have = new Set(session.hidden ?? [])
    const unmasked = this.masks(session.roots, session.id, false).filter((h) => !have.has(h))
    if (unmasked.length > 0) {
      throw new VisError(
        'ext.dirs-exposed',
        `session ${session.id} can reach ${unmasked.join(', ')} unmasked; code the sandbox writes there ` +
          'would run unconfined as an extension. Start it with hidden: registry.maskFor(roots).',
        { sessionId: session.id, path: unmasked[0] },
      )
    }
    const taken = new Set(hostTools.map((t) => t.name))
    const ext = this.tools().filter((t) => !taken.has(t.name))
    const hooked = opts.gated ? this.hookedTools() : new Set<string>()
    const wrap = (t: Tool): Tool & { approval?: 'required' } =>
      !opts.gated
        ? this.withHooks(t)
        : hooked.has(t.name)
          ? { ...this.withHooks(t), approval: 'required' as const }
          : this.withHooks(t, true)
    await Promise.all([
      ...hostTools.map((t) => session.bindTool(wrap(t))),
      ...ext.map((t) => session.bindTool(t)),
    ])
    // Every binding (a reload too) hands over the whole set: what changed is replaced, what
    // is gone stops importing.
    if (session.callModule) {
      await session.callModule('vis_guest.sandbox_modules', 'install', [this.sandboxModules()])
    }
    return ext.map((t) => t.name)
  }

  // The sandbox modules of every loaded extension (a later one wins a clash: project over
  // user, as for tools).
  sandboxModules(): Record<string, string> {
    const out: Record<string, string> = {}
    for (const ext of this.list()) Object.assign(out, ext.manifest.sandbox_modules)
    return out
  }

  // What the extensions contribute to the session dict: { <alias>: slice }.
  async sessionContext(sessionId: string): Promise<Record<string, Json>> {
    const out: Record<string, Json> = {}
    for (const ext of this.list()) {
      const m = ext.manifest
      if (m.ctx === 'data') out[m.alias] = (m.ctx_data ?? {}) as Json
      else if (m.ctx === 'function') {
        try {
          out[m.alias] = (await this.inSession(sessionId, ext.key, 'ctx', [])) as Json
        } catch (err) {
          throw new VisError('ext.ctx-failed', `ctx of extension ${m.name} failed: ${pythonReason(err)}`, {
            sessionId,
            extension: m.name,
          })
        }
      }
    }
    return out
  }

  // Runs one extension's slash command (`/name args`) in the session's trusted worker.
  async runSlashCommand(
    sessionId: string,
    extension: string,
    command: string,
    args: unknown[] = [],
  ): Promise<Json> {
    const ext = this.get(extension)
    if (!ext?.manifest.slash_commands.some((c) => c.name === command)) {
      throw new VisError('ext.no-command', `no slash command ${command} in extension ${extension}`, {
        sessionId,
      })
    }
    return this.callable(ext, 'slash', command)(args, { sessionId })
  }

  // Closes a session's trusted worker (call when the session is disposed).
  endSession(sessionId: string): Promise<void> {
    return this.sessions.end(sessionId)
  }

  async close(): Promise<void> {
    await this.sessions.closeAll()
  }
}
