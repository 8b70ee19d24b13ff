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
// Network on, the hook matches no hosts: every connection and lookup of the guest goes
// to the host's egress proxy (its only way out), whose evaluator is the one policy check
// (vis_guest/net.py turns its refusals into PermissionError). A second matcher here
// would only disagree with it (it refused the proxy's own address).
export function toNativePolicy(p: WorkerPolicy, distRoot: string, writable: string[] = []): Policy {
  return {
    readOnly: [distRoot, guestDir],
    readWrite: [...p.roots, ...writable],
    network: { enabled: p.network.enabled },
    processes: false,
    ctypes: false,
  }
}
