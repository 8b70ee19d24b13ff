import type { Policy } from '../native/index.js'
import { guestDir } from '../util/home.js'
import type { WorkerPolicy } from './policy.js'

// Everything the hook can grant: the kernel layers are then the only thing in the way.
export function permissiveNativePolicy(): Policy {
  return { readOnly: ['/'], readWrite: ['/'], network: { enabled: true }, processes: true, ctypes: true }
}

// The in-interpreter audit policy derived from the worker's spawn policy: the
// distribution and the guest runtime readable, the roots (and the worker's outbox)
// read-write. Processes and
// ctypes stay off: Python never spawns (the shell tool runs on the host side).
// With an egress proxy (the jailed worker's only way out), the hook matches no hosts:
// every connection and lookup goes to the proxy, whose evaluator is the one policy check
// (vis_guest/net.py turns its refusals into PermissionError); a matcher here would only
// disagree with it (it refused the relay's own address). Without a jail there is no
// proxy, and the hook's name list is the only (bypassable) check left.
export function toNativePolicy(
  p: WorkerPolicy,
  distRoot: string,
  writable: string[] = [],
  opts: { egressProxy?: boolean } = {},
): Policy {
  const names = p.network.allow.filter((a): a is string => typeof a === 'string')
  const allow = !opts.egressProxy && p.network.allow.length > 0 ? { allow: names } : {}
  return {
    readOnly: [distRoot, guestDir, ...(p.mounts ?? []).map((m) => m.target)],
    readWrite: [...p.roots, ...writable],
    network: { enabled: p.network.enabled, ...allow },
    processes: false,
    ctypes: false,
  }
}
