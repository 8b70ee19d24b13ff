import { existsSync } from 'node:fs'
import { dirname, resolve, sep } from 'node:path'
import { visHome } from '../util/home.js'
import { registeredHomes, registerHome, userDefaultHome, usualDefaultHome } from '../util/home-registry.js'
import { realish } from '../util/real-path.js'

// The vis homes no sandbox may reach: this process's default one and every runtime's own, the
// user's ~/.vis (which holds the registry; also the password database's one when HOME names another
// place), and every home another vis process of this user
// opened (home-registry.ts), asked afresh at each check so a home opened since is covered by the
// next jail. Their database, logs, extensions and owner sockets are the host's; a root inside one
// is refused (root-guard.ts), a root around one masks it.
//
// Every root check and every jail asks twice, and a machine that has run many vis processes has
// thousands of registered homes: so the list is indexed once per version of the registry (a set
// for "which home is this path in", a sorted array for "which homes are in this directory"),
// and each question costs the path's depth or a binary search, not a pass over every home.

const homes = new Set<string>()

export function protectHome(home: string): void {
  homes.add(resolve(home))
  registerHome(home)
}

type Index = { registry: readonly string[]; own: string; set: Set<string>; sorted: string[] }
let index: Index | undefined

function current(): Index {
  // With HOME elsewhere, the user's usual ~/.vis too: this process records its jails there for the
  // user's other vis processes (util/vis-processes.ts), so no sandbox of it may reach that folder.
  const usual = usualDefaultHome()
  const own = [visHome(), userDefaultHome(), ...(usual === undefined ? [] : [usual]), ...homes].map(realish)
  const registry = registeredHomes()
  const key = own.join('\0')
  if (index?.registry === registry && index.own === key) return index
  const set = new Set([...own, ...registry])
  index = { registry, own: key, set, sorted: [...set].sort() }
  return index
}

// Every protected home (real paths).
export function protectedHomes(): readonly string[] {
  return current().sorted
}

// The protected home a real path is, or lies inside (undefined when none).
export function homeAround(real: string): string | undefined {
  const { set } = current()
  for (let p = real; ; p = dirname(p)) {
    if (set.has(p)) return p
    if (dirname(p) === p) return undefined
  }
}

// The protected homes at or below a real directory that still exist (the registry may list one
// gone since this process read it, and a jail makes a missing mask's mount point).
export function homesInside(real: string): string[] {
  const { sorted } = current()
  const prefix = real.endsWith(sep) ? real : real + sep
  const out: string[] = []
  // The first entry not before `real`; every path inside it sorts in one run from there ("/a"
  // < "/a/..." < "/a0"), interleaved only with siblings that share the prefix's characters.
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if ((sorted[mid] as string) < real) lo = mid + 1
    else hi = mid
  }
  for (let i = lo; i < sorted.length; i++) {
    const h = sorted[i] as string
    if (!h.startsWith(real)) break
    if ((h === real || h.startsWith(prefix)) && existsSync(h)) out.push(h)
  }
  return out
}
