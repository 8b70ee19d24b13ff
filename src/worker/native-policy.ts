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
export function toNativePolicy(p: WorkerPolicy, distRoot: string, writable: string[] = []): Policy {
  const allow = p.network.allow.length > 0 ? { allow: p.network.allow } : {}
  return {
    readOnly: [distRoot, guestDir],
    readWrite: [...p.roots, ...writable],
    network: { enabled: p.network.enabled, ...allow },
    processes: false,
    ctypes: false,
  }
}
