import { resolve } from 'node:path'
import { Drafts } from '../drafts/drafts.js'
import { DEFAULT_SESSION_ATTACHMENTS_MB } from './attachment-budget.js'
import type { OutcomeLimits } from './block-finish.js'
import { exclusive } from './block-queue.js'
import { type EngineCore, requireSession } from './engine-core.js'
import type { EngineParts } from './engine-lifecycle.js'
import type { EngineOptions } from './engine-options.js'
import { EventLog } from './event-log.js'
import { onRuntimeEvent } from './events-bridge.js'
import type { Live } from './live.js'
import { loadMcpConfig } from './mcp-config.js'
import { engineMetrics } from './metrics.js'
import type { BlockView } from './schemas.js'
import { ensureWorker, replaceWorker } from './session-worker.js'
import { fromStoredPolicy } from './stored-policy.js'

const DEFAULT_MAX_OUTPUT_CHARS = 1024 * 1024

// Builds the state an engine's modules share, with the drafts, the metrics and the deps
// objects of execute.ts, worker-start.ts and events-bridge.ts wired to it. The callbacks only
// run once the core exists (after construction).
export function wireCore(parts: EngineParts, options: EngineOptions): EngineCore {
  const { store, factory, runtime, extensions } = parts
  const limits: OutcomeLimits = { maxOutputChars: options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS }
  const mcpServers = options.mcpServers ?? loadMcpConfig(store.home).servers
  const log = new EventLog(store, { flushMs: options.eventFlushMs })
  const lives = new Map<string, Live>()
  const pending = new Map<string, Promise<BlockView>>()
  const drafts = new Drafts(store.db, store.home, {
    primaryRoot: (id) =>
      (fromStoredPolicy(requireSession(core, id).policy).policy.roots ?? []).map((r) => resolve(r))[0],
    // This process's pins, or the stored ones of a session it has not started a worker for yet.
    rootPin: (id, root) => {
      const own = lives.get(id)?.pins?.[root]
      if (own !== undefined) return own
      const stored = fromStoredPolicy(requireSession(core, id).policy).pins
      return stored?.here ? stored.pins[root] : undefined
    },
    exclusive: (id, fn) => exclusive(core, id, fn),
    replaceWorker: (id) => replaceWorker(core, id),
    record: (id, type, data) => log.append(id, type, JSON.parse(JSON.stringify(data))),
  })
  extensions?.followDrafts((id) => drafts.namespacesFor(id))
  const metrics = engineMetrics({
    sessionsOpen: () => (store.db.open ? store.sessions.count('open') : 0),
    sessionsLive: () => [...lives.values()].filter((l) => l.session?.state === 'ready').length,
    blocksRunning: () => pending.size,
    poolSize: () => options.pool?.size ?? 1,
    workerProcesses: () => factory.workerPids().length,
  })
  const bridge = { log, metrics, drafts, limits }
  const core: EngineCore = {
    store,
    factory,
    runtime,
    log,
    metrics,
    drafts,
    extensions,
    lives,
    pending,
    closing: undefined,
    ownership: undefined,
    executeDeps: {
      ...bridge,
      store,
      extensions,
      attachmentsMb: options.maxSessionAttachmentsMb ?? DEFAULT_SESSION_ATTACHMENTS_MB,
      ensureWorker: (live) => ensureWorker(core, live),
    },
    workerDeps: {
      factory,
      store,
      log,
      metrics,
      drafts,
      extensions,
      options,
      mcpServers,
      requireSession: (id) => requireSession(core, id),
      onEvent: (live, ev) => onRuntimeEvent(bridge, live, ev),
    },
  }
  return core
}
