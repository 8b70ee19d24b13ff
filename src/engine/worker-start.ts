import { draftMount } from '../confinement/draft-mount.js'
import { projectExtensionMasksFor } from '../confinement/project-extension-masks.js'
import { homeMasksFor, pinRoots, rootChanged } from '../confinement/root-guard.js'
import type { NetworkEntry } from '../contracts/network-policy.js'
import type { Drafts } from '../drafts/drafts.js'
import { draftDiffTool } from '../drafts/tool.js'
import { clearDraftView, setDraftView } from '../drafts/view.js'
import type { ExtensionRegistry } from '../extensions/index.js'
import { bindMcpServers } from '../mcp-client/bind.js'
import type { McpServersInput } from '../mcp-client/config.js'
import type { Store } from '../persistence/index.js'
import type { SessionEvent as RuntimeEvent } from '../sessions/events.js'
import type { Session } from '../sessions/session.js'
import type { SessionFactory } from '../sessions/session-factory.js'
import { normalizePolicy } from '../sessions/session-policy.js'
import { catThroughSkills } from '../skills/cat-through.js'
import { discoverFor, rememberSkills, skillMounts } from '../skills/session-skills.js'
import { skillTool } from '../skills/tool.js'
import type { EngineOptions } from './engine-options.js'
import type { EventLog } from './event-log.js'
import type { Live } from './live.js'
import type { EngineMetrics } from './metrics.js'
import { gateOutsideTools } from './mode-gate.js'
import { hostToolsFor } from './session-open.js'
import { fromStoredPolicy, samePin, withTightenedNetwork } from './stored-policy.js'
import { sandboxSysPath } from './sys-path.js'

// What starting a session's worker needs from the engine that owns it.
export type WorkerDeps = {
  factory: SessionFactory
  store: Store
  log: EventLog
  metrics: EngineMetrics
  drafts: Drafts
  extensions: ExtensionRegistry | undefined
  options: EngineOptions
  mcpServers: McpServersInput
  // The session's stored row (its policy); throws session.not-found.
  requireSession: (id: string) => { policy: unknown }
  // Where the worker's runtime events go (src/engine/events-bridge.ts).
  onEvent: (live: Live, ev: RuntimeEvent) => void
}

// A session this process has no worker for (it was opened by an earlier host process):
// a fresh worker with the same policy, then its definitions restored from the snapshot.
export async function reopenWorker(deps: WorkerDeps, live: Live): Promise<Session> {
  const row = deps.requireSession(live.id)
  const within = live.within ?? deps.options.allowRoots
  const stored = fromStoredPolicy(row.policy)
  const policy = normalizePolicy({ ...stored.policy, ...(within ? { within } : {}) })
  // A session opened by an earlier host process is held to the pins stored at its creation: a
  // root whose path names another directory now is refused (policy.root-changed). One stored
  // before pins were kept pins anew here, at its first start.
  if (!live.pins) {
    const ctx = { sessionId: live.id, op: 'open-session' }
    const here = stored.pins?.here ? stored.pins.pins : undefined
    const now = pinRoots(policy.roots, { within: policy.within, ...(here ? { pins: here } : {}) }, ctx)
    // Pinned on another machine (a cluster node's takeover): the inodes must still match.
    for (const [root, pin] of Object.entries(stored.pins && !stored.pins.here ? stored.pins.pins : {})) {
      const id = now[root]
      if (id !== undefined && !samePin(pin, id, false)) throw rootChanged(root, ctx)
    }
    live.pins = now
  }
  if (policy.roots.length > 0) policy.pins = live.pins
  const session = await startWorker(deps, live, policy)
  deps.metrics.workerRestarts.inc()
  const defs = deps.store.defs.get(live.id)
  if (defs !== undefined) {
    let data: Record<string, unknown>
    try {
      const r = await session.callGuest('restore_defs', defs.snapshot)
      data = typeof r === 'object' && r !== null ? (r as Record<string, unknown>) : { result: String(r) }
    } catch (err) {
      data = { error: (err as Error).message }
    }
    deps.log.append(live.id, 'defs.restored', JSON.parse(JSON.stringify(data)))
  }
  return session
}

// A jailed worker for the session's policy with everything bound into it: host tools (and the
// draft diff tool), extension tools, MCP servers' tools, and the sandbox's sys.path.
export async function startWorker(
  deps: WorkerDeps,
  live: Live,
  policy: ReturnType<typeof normalizePolicy>,
): Promise<Session> {
  const { extensions, options, drafts } = deps
  // Extension directories inside the roots are masked by the jail (refused when they cannot be).
  // So is a vis home inside a root, for the host's file tools as for the jail.
  // And any project's extension folder at the top of a root, whatever this engine's project.
  const hidden = [
    ...new Set([
      ...(extensions?.maskFor(policy.roots, live.id) ?? []),
      ...homeMasksFor(policy.roots),
      ...projectExtensionMasksFor(policy.roots),
    ]),
  ]
  const sysPath = sandboxSysPath({
    roots: policy.roots,
    project: options.project,
    sourcePaths: options.sourcePaths,
    python: options.python,
  })
  sysPath.catch(() => undefined)
  const overlay = drafts.overlayFor(live.id)
  // A blank draft's empty lower layer lacks the masked extension folders bubblewrap binds over.
  drafts.prepareMasks(live.id, hidden)
  // Skills and agent definitions for these roots; those outside the roots are mounted read-only
  // at a fixed path (src/skills). A folder that cannot be read is a doctor note, never a failure.
  const found = await discoverFor(policy.roots, deps.store.home).catch(() => undefined)
  const mounts = found ? skillMounts(found) : []
  const session = await deps.factory.open(
    live.id,
    normalizePolicy({
      ...policy,
      ...(mounts.length > 0 ? { mounts } : {}),
      ...(hidden.length > 0 ? { hidden } : {}),
      ...(overlay ? { overlay } : {}),
    }),
    Promise.resolve([]),
    // A tightening is part of the session's policy: stored before it is reported done, so a
    // sub_loop child (built from the stored policy) and a later host process reopening the
    // session start from the narrowed network, not the one the session was created with.
    { onNetwork: (net) => storeTightening(deps.store, live.id, net) },
  )
  if (found) rememberSkills(session, found)
  if (overlay) setDraftView(live.id, overlay.root, (await draftMount(overlay)).pid)
  else clearDraftView(live.id)
  try {
    const host =
      options.tools !== false && policy.roots.length > 0
        ? await hostToolsFor(live.id, overlay ? { ...policy, overlay } : policy, hidden)
        : []
    if (host.length > 0) host.push(draftDiffTool(drafts, live.id))
    if (options.tools !== false && found && found.skills.length > 0) {
      const i = host.findIndex((t) => t.name === 'cat')
      if (i >= 0) host[i] = catThroughSkills(host[i]!, found.skills, live.id)
      host.push(skillTool(found.skills))
    }
    live.hostTools = host
    // A read-only or review session: what runs outside the jail waits for approval.
    live.gateOutside = policy.mode !== undefined
    const binder = live.gateOutside ? gateOutsideTools(session, new Set(host.map((t) => t.name))) : session
    if (extensions) live.extTools = await extensions.bindInto(binder, host, { gated: live.gateOutside })
    else await Promise.all(host.map((t) => session.bindTool(t)))
    // MCP clients run here on the host, never in the jail; they close with the session.
    await bindMcpServers(binder, deps.mcpServers, deps.store.home)
    const paths = await sysPath
    if (paths.length > 0) await session.callGuest('install_runtime', { sys_path: paths })
  } catch (err) {
    await session.dispose()
    await extensions?.endSession(live.id)
    throw err
  }
  live.session = session
  live.off = session.subscribe((ev) => deps.onEvent(live, ev))
  return session
}

function storeTightening(
  store: Store,
  sessionId: string,
  net: { enabled: boolean; allow: NetworkEntry[] },
): void {
  store.transaction(() => {
    const row = store.sessions.require(sessionId)
    store.sessions.setPolicy(sessionId, withTightenedNetwork(row.policy, net))
  })
}
