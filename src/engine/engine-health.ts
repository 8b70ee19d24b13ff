import type { EngineCore } from './engine-core.js'

// The service's health report. Where it lives only for a caller who proved the token: the
// home path is a local secret.
export function engineHealth(
  core: EngineCore,
  where: { home: string; bindAddress: string | undefined; startedAt: number },
  opts: { revealPaths?: boolean },
) {
  const paths =
    opts.revealPaths === false ? {} : { home: where.home, bind_address: where.bindAddress ?? null }
  return {
    ok: core.closing === undefined,
    ...paths,
    uptime_s: Math.round((Date.now() - where.startedAt) / 1000),
    sessions_open: core.store.db.open ? core.store.sessions.count('open') : 0,
    blocks_running: core.pending.size,
  }
}
