import type { Check } from '../confinement/probe.js'
import { type ExtensionRegistry, warningChecks } from '../extensions/index.js'
import { assertOpen, type EngineCore } from './engine-core.js'
import { gateOutsideTools } from './mode-gate.js'
import type { ExtensionList } from './schemas.js'
import { extensionList } from './views.js'

// Loads every extension file again (a file that fails keeps its previous version), then
// brings live sessions up to date: new tools are bound, tools that went away are unbound.
// The installs are issued at once and each session's next block waits for them; a block
// running now is not waited for.
export async function reloadExtensions(core: EngineCore): Promise<ExtensionList> {
  assertOpen(core)
  const reg = core.extensions
  if (reg) {
    await reg.reload()
    for (const live of core.lives.values()) {
      const s = live.session
      if (s?.state !== 'ready') continue
      const host = new Set(live.hostTools.map((t) => t.name))
      const next = reg
        .tools()
        .map((t) => t.name)
        .filter((n) => !host.has(n))
      const gone = live.extTools.filter((n) => !next.includes(n))
      live.extTools = next
      for (const n of gone) s.unbind(n).catch(() => undefined)
      reg
        .bindInto(live.gateOutside ? gateOutsideTools(s, host) : s, live.hostTools, {
          gated: live.gateOutside,
        })
        .catch(() => undefined)
    }
  }
  return extensionList(reg)
}

// The extensions' doctor checks: one warning per file that failed to load.
export function extensionChecks(reg: ExtensionRegistry | undefined): Check[] {
  if (!reg) return [{ id: 'extensions', level: 'info', message: 'extensions are turned off' }]
  return warningChecks(reg.list().length, reg.warnings())
}
