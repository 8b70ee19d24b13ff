import type { Store } from '../persistence/store.js'
import type { Json, Tool, ToolContext } from '../tools/types.js'
import { VisError } from '../util/errors.js'
import { visHome } from '../util/home.js'
import { type Discovery, discoverExtensions, type ExtensionSource } from './discover.js'
import { type ExtensionManifest, HookAnswer, LoadResults } from './manifest.js'
import { registrationWorker } from './registration.js'
import { type RealiseSpec, SessionWorkers } from './session-workers.js'
import { pythonReason } from './trusted-worker.js'

const MODULE = 'vis_ext.extensions'

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
}

export type RegistryOptions = {
  home?: string
  project?: string
  python?: string
  // Where vis.state lives; without it extensions have no durable state.
  store?: Store
}

// Minimal view of a session the registry binds into (src/sessions' Session fits).
export type BindableSession = { id: string; bindTool(tool: Tool): Promise<void> }

// The host's view of the user's Python extensions: what loaded, what did not and why, and
// their tools in the same Tool shape as the built-in ones. Tools run in each session's own
// trusted worker, never in the sandbox and never in the shared registration worker.
export class ExtensionRegistry {
  readonly home: string
  readonly project: string | undefined
  private readonly python: string | undefined
  private loaded = new Map<string, LoadedExtension>()
  private problems: ExtensionWarning[] = []
  private discovery: Discovery = { dirs: [], sources: [], shadowed: [] }
  private readonly sessions: SessionWorkers
  private reloading: Promise<void> | undefined

  private constructor(opts: RegistryOptions) {
    this.home = visHome(opts.home)
    this.project = opts.project
    this.python = opts.python
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
    const worker = await registrationWorker(this.home, this.python)
    const specs = discovery.sources.map((s) => ({
      key: s.key,
      scope: s.scope,
      kind: s.kind,
      path: s.path,
      dir: s.dir,
    }))
    const results = LoadResults.parse(await worker.call(MODULE, 'load_all', [discovery.dirs, specs]))
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
      if (r.ok) {
        ext = { ...src, manifest: r.manifest, sha: r.sha, source: r.source, loadedAt: now }
      } else {
        const prev = this.loaded.get(src.key)
        if (prev && prev.path === src.path) {
          warn(`${r.error}; the version loaded before keeps working`, true)
          ext = prev
        } else warn(r.error)
      }
      if (!ext) return
      // Sources are ordered global then project: a later clash is decided for the project.
      const byName = names.get(ext.manifest.name)
      const byAlias = aliases.get(ext.manifest.alias)
      for (const [clash, kind] of [
        [byName, 'name'],
        [byAlias, 'alias'],
      ] as const) {
        if (clash === undefined) continue
        const other = next.get(clash)!
        if (src.scope === 'project' && other.scope === 'global') {
          next.delete(clash)
          problems.push({
            key: other.key,
            path: other.path,
            scope: other.scope,
            reason: `${kind} ${JSON.stringify(kind === 'name' ? other.manifest.name : other.manifest.alias)} is also used by project extension ${src.path}, which wins`,
          })
        } else {
          warn(
            `${kind} ${JSON.stringify(kind === 'name' ? ext.manifest.name : ext.manifest.alias)} is already used by ${other.path}`,
          )
          return
        }
      }
      next.set(ext.key, ext)
      names.set(ext.manifest.name, ext.key)
      aliases.set(ext.manifest.alias, ext.key)
    })
    this.discovery = discovery
    this.loaded = next
    this.problems = problems
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
    }
  }

  // Runs vis_ext.extensions.<fn>(key, ...) in the session's worker at the current version.
  private async inSession(sessionId: string, key: string, fn: string, args: unknown[]): Promise<unknown> {
    const sw = this.sessions.for(sessionId)
    return sw.serial(key, async (w) => {
      const ext = this.loaded.get(key)
      if (!ext) throw new VisError('ext.gone', `extension ${key} is no longer loaded`, { sessionId })
      await sw.ensure(w, this.discovery.dirs, this.spec(ext))
      return w.call(MODULE, fn, [key, ...args])
    })
  }

  private callable(ext: LoadedExtension, kind: 'tool' | 'slash', name: string) {
    return async (args: unknown[], ctx: Pick<ToolContext, 'sessionId'>): Promise<Json> => {
      try {
        return (await this.inSession(ctx.sessionId, ext.key, 'call', [kind, name, args])) as Json
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
  withHooks(tool: Tool): Tool {
    const run = async (args: unknown[], ctx: ToolContext): Promise<Json> => {
      await this.runHooks('before', tool.name, args, null, ctx.sessionId)
      const result = await tool.run(args, ctx)
      await this.runHooks('after', tool.name, args, result, ctx.sessionId)
      return result
    }
    return { ...tool, run }
  }

  private async runHooks(
    when: 'before' | 'after',
    toolName: string,
    args: unknown[],
    result: Json,
    sessionId: string,
  ): Promise<void> {
    for (const ext of this.list()) {
      for (const h of ext.manifest.op_hooks) {
        if (h.when !== when || h.tool !== toolName) continue
        let answer: HookAnswer
        try {
          answer = HookAnswer.parse(await this.inSession(sessionId, ext.key, 'hook', [h.index, args, result]))
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

  // Binds every extension tool, and the given host tools wrapped with op hooks, into a
  // session. A host tool's name wins over an extension tool of the same name.
  async bindInto(session: BindableSession, hostTools: Tool[] = []): Promise<void> {
    const taken = new Set(hostTools.map((t) => t.name))
    const ext = this.tools().filter((t) => !taken.has(t.name))
    await Promise.all([
      ...hostTools.map((t) => session.bindTool(this.withHooks(t))),
      ...ext.map((t) => session.bindTool(t)),
    ])
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
    if (!ext || !ext.manifest.slash_commands.some((c) => c.name === command)) {
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
