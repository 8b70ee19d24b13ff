import type { NetworkEntryInput } from '../contracts/network-policy.js'
import { parseReply } from '../protocol/parent-requests.js'
import type { Worker } from '../worker/worker.js'
import { type RestoreReport, RestoreReportSchema } from './survived.js'

export const GUEST_API = 'vis_guest.api'

type NetworkSetting = { enabled: boolean; allow?: NetworkEntryInput[] }

// Everything a session told its worker besides blocks, kept so that a fresh worker can be
// brought to the same state after the old one was killed (issue 13, section 3): the tool,
// data and namespace bindings by name, the guest runtime config it merged in (sys.path), and
// the network tightenings in order. The spawn policy itself comes with the fresh worker.
export class WorkerSetup {
  private readonly specs = new Map<string, Record<string, unknown>>()
  private readonly removed = new Set<string>()
  private runtimeConfig: Record<string, unknown> | undefined
  private readonly network: NetworkSetting[] = []
  private cwd: string | undefined

  install(spec: Record<string, unknown>): void {
    const name = String(spec.name)
    // Re-binding moves the name to the end: replayed in the order the session last set it.
    this.specs.delete(name)
    this.specs.set(name, spec)
    this.removed.delete(name)
  }

  remove(name: string): void {
    this.specs.delete(name)
    this.removed.add(name)
  }

  runtime(config: unknown): void {
    if (typeof config !== 'object' || config === null) return
    this.runtimeConfig = { ...this.runtimeConfig, ...(config as Record<string, unknown>) }
  }

  tighten(net: NetworkSetting): void {
    this.network.push(net)
  }

  // The guest's working directory after its last block (a fresh worker starts in the first root).
  chdir(cwd: string | undefined): void {
    if (cwd !== undefined) this.cwd = cwd
  }

  // Brings a fresh worker to the recorded state, then rebuilds the session's definitions from
  // the snapshot. Tools go before the definitions: a restored function may name a tool.
  async replay(worker: Worker, snapshot: unknown): Promise<RestoreReport | undefined> {
    // The worker's proxy (the boundary) gets each tightening too, as setNetwork does.
    for (const net of this.network)
      worker.setEgressRules(parseReply('network', await worker.call('network', net)))
    if (this.runtimeConfig) await guest(worker, 'install_runtime', this.runtimeConfig)
    const installs: Promise<unknown>[] = []
    for (const [name, spec] of this.specs) {
      // A warm worker may carry this exact spec already (the default tools).
      const pre = worker.preinstalled.get(name)
      worker.preinstalled.delete(name)
      if (pre !== JSON.stringify(spec)) installs.push(worker.call('install-tool', { spec }))
    }
    // A preinstalled tool this session does not have must not linger in the guest.
    for (const name of worker.preinstalled.keys()) installs.push(guest(worker, 'remove_tool', name))
    for (const name of this.removed) installs.push(guest(worker, 'remove_tool', name))
    worker.preinstalled.clear()
    await Promise.all(installs)
    // A directory that is gone (or that the fresh jail does not show) leaves it where it starts.
    if (this.cwd !== undefined)
      await worker.call('run', { module: 'os', fn: 'chdir', args: [this.cwd] }).catch(() => undefined)
    if (snapshot === undefined || snapshot === null) return undefined
    return RestoreReportSchema.parse(await guest(worker, 'restore_defs', snapshot))
  }
}

export function guest(worker: Worker, fn: string, arg?: unknown): Promise<unknown> {
  return worker.call('run', { module: GUEST_API, fn, args: arg === undefined ? [] : [arg] })
}
