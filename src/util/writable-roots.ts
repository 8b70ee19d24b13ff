import { basename, dirname, join } from 'node:path'
import { visHome } from './home.js'
import { registeredHomes, userDefaultHome } from './home-registry.js'
import { notedSessionRoots, rootHolding } from './host-programs.js'
import { identityOf, type LiveJail, liveJails } from './live-jails.js'
import { within } from './path-within.js'
import { realish } from './real-path.js'
import { processKey } from './vis-processes.js'

// The identities (device:inode) of `path`'s nearest existing directory and of each directory
// above it: a jail's root found among them holds the path, whatever the root is called now.
export function identityChain(path: string): Set<string> {
  const ids = new Set<string>()
  for (let d = realish(path); ; d = dirname(d)) {
    const id = identityOf(d)
    if (id !== undefined) ids.add(id)
    if (dirname(d) === d) break
  }
  return ids
}

// Every place a sandbox may write now: the roots this process's sessions opened and every live
// jail's, of any vis process of this user. Read at each use (roots open after start-up), and once
// per step: an MCP server's start judges its cwd, PATH entries, command, env and HOME against one
// reading of the live-jail registry, not one per path.
export type WritablePlaces = {
  roots: string[]
  // The writable root that holds `path`, if any (writableRootHolding).
  holding(path: string): string | undefined
}

export function writablePlaces(): WritablePlaces {
  return placesOf(liveJails(), notedSessionRoots())
}

// Whether a live jail of ANOTHER vis process of this user may write `path` (thirteenth outsider
// pass: a root of another install's process holding this install's node_modules writes it; a
// process of this same install binds the same directories read-only, as each entry says).
export function otherProcessWrites(path: string): boolean {
  const self = processKey()
  return (
    placesOf(
      liveJails().filter((j) => `${j.pid}-${j.starttime}` !== self),
      [],
    ).holding(path) !== undefined
  )
}

// The spellings of `path` a root is judged by (rootHolding): as written, its real path, and its
// parent's real path with its name.
const spellings = (path: string): string[] => [
  path,
  realish(path),
  join(realish(dirname(path)), basename(path)),
]

// Every live jail's roots and `own` (this process's session roots, which every jail of this process
// binds as its entry says). A jail does not write what it binds read-only over its roots (its
// process's package and dependency directories: LiveJail.readOnly), so a path whose every spelling
// inside that root lies in one of those is not that jail's to write: a `vis serve` and a `vis mcp`
// of one install, or a test suite's processes, each with a root above the checkout, do not make the
// package each other's sandbox's. A root renamed since (found by identity) has no such exemption.
function placesOf(jails: LiveJail[], own: readonly string[]): WritablePlaces {
  const set = new Set(own)
  for (const j of jails) for (const r of j.roots) set.add(r)
  const roots = [...set]
  const byIdentity = jails.some((j) => j.rootIds.length > 0)
  return {
    roots,
    holding(path) {
      const ownRoot = rootHolding(path, own)
      if (ownRoot !== undefined) return ownRoot
      const places = spellings(path)
      // The jails whose roots hold the path by name, all of it inside what they bind read-only: not
      // asked again by identity, which would find the same root (the fresh-clone CI: a session on
      // the package itself made the package that jail's again by its root's inode).
      const readOnlyTo = new Set<LiveJail>()
      for (const j of jails)
        for (const r of j.roots) {
          const inRoot = places.filter((p) => within(p, r))
          if (inRoot.length === 0) continue
          if (!inRoot.every((p) => j.readOnly.some((d) => within(p, d)))) return r
          readOnlyTo.add(j)
        }
      if (!byIdentity) return undefined
      const chain = identityChain(path)
      for (const j of jails) {
        if (readOnlyTo.has(j)) continue
        const i = j.rootIds.findIndex((id) => chain.has(id))
        if (i >= 0) return j.roots[i] ?? path
      }
      return undefined
    },
  }
}

// The writable root that holds `path`, if any: by its path, its real path or its parent's real
// path (rootHolding) against every writable root, and by identity against every live jail's roots
// (a root the person or another session renamed after its jail began is still that jail's root).
// Callers check at the moment of use: the host is about to run, load or read what lies there.
export function writableRootHolding(path: string): string | undefined {
  return writablePlaces().holding(path)
}

// The place a sandbox can write that holds `path`, if any: a vis home (every registered one, this
// process's and the user's default) or a writable root (writableRootHolding). A home is not a
// root, but every jail writes into parts of it (its worker's outbox, a draft's upper folder) and
// the host keeps caches there, so nothing the host loads as code may come from one; a home is
// named first, as callers exempt nothing in it. Kept apart from writableRootHolding, which MCP
// launches ask and whose default working folder lies inside the home.
export function sandboxWritableHolding(path: string): { place: string; home: boolean } | undefined {
  const at = realish(path)
  const homes = [...registeredHomes(), realish(visHome()), realish(userDefaultHome())]
  const home = homes.find((h) => within(at, h))
  if (home !== undefined) return { place: home, home: true }
  const root = writableRootHolding(path)
  return root === undefined ? undefined : { place: root, home: false }
}
