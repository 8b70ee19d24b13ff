import { findHostProgram, HOST_PROGRAMS, trustedSearchPath } from '../util/host-programs.js'
import type { Check } from './probe.js'

// What `vis doctor` says about the programs the host starts outside every jail: the binary each
// one resolves to (util/host-programs.ts), so an operator sees that PATH played no part.
export function hostProgramChecks(): Check[] {
  return HOST_PROGRAMS.map((name) => {
    const p = findHostProgram(name)
    if (p.path) {
      const note = p.skipped ? ` (passed over ${p.skipped})` : ''
      return {
        id: 'host-program',
        level: p.skipped ? 'warn' : 'info',
        message: `${name}: ${p.path} (from ${p.source}; never PATH)${note}`,
      }
    }
    return {
      id: 'host-program',
      level: p.skipped ? 'warn' : 'info',
      message: p.skipped
        ? `${name}: not used: ${p.skipped}`
        : `${name}: not installed in ${p.source === 'VIS_BWRAP' ? 'VIS_BWRAP' : trustedSearchPath().join(':')} (what needs it says so when used)`,
    }
  })
}
