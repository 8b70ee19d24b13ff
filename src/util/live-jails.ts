import { randomBytes } from 'node:crypto'
import { fstatSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { isAbsolute, join } from 'node:path'
import { hostDependencyDirs } from './dependency-dirs.js'
import { packageRoot } from './home.js'
import { within } from './path-within.js'
import { realish } from './real-path.js'
import {
  liveJailsDir,
  liveJailsDirs,
  livenessJudge,
  processKey,
  removeProcessRecord,
  sweepDeadProcesses,
  writeProcessRecord,
} from './vis-processes.js'

export { liveJailsDir }

// The jails running now, each with the roots its sandbox may write and the vis homes it masks
// among them. A jail's masks are fixed when it starts, and a session's worker keeps its jail (and
// every thread a block left running) for the session's life: a vis home made inside one of its
// roots later is an ordinary folder to that sandbox, while the host runs what it finds there
// (extensions/, mcp.json, trust/). So a home is opened only when no live jail writes it unmasked
// (home-guard.ts), which needs every vis process's jails, not only this one's.
//
// Entries live beside the homes registry in the user's default home, which every jail masks. One
// file per jail, named <pid>-<starttime>-<random>.json after the vis process that started it
// (bubblewrap dies with that process): an entry whose process is gone is stale and removed by
// whoever reads it. Whether it is gone is told by that process's FIFO (vis-processes.ts), the same
// from every pid namespace; an entry that cannot be judged is kept.

// `masked` is null while the jail is still reading the homes registry for its masks.
// Each root and masked home is named by its path AND its identity (device:inode): the sandbox
// keeps the directory it was given whatever it is called later, so a root renamed after the jail
// started (by another session, or by the person's mv) is still recognised by what it is.
export type LiveJail = {
  pid: number
  starttime: string
  worker?: number
  roots: string[]
  rootIds: string[]
  masked: string[] | null
  maskedIds: string[]
  // The host places inside its roots the jail binds read-only (its process's package and the
  // dependency directories it loads from): a file there is not that sandbox's to write, whichever
  // root holds it. Empty in an entry of an older vis: then nothing counts as read-only.
  readOnly: string[]
}

export const identityOfFd = (fd: number): string => {
  const st = fstatSync(fd)
  return `${st.dev}:${st.ino}`
}

export const identityOf = (path: string): string | undefined => {
  try {
    const st = statSync(path)
    return `${st.dev}:${st.ino}`
  } catch {
    return undefined
  }
}

export type LiveJailEntry = {
  // Records the jail, just before it reads the homes registry for its masks: a home registered
  // after that read then finds this entry (home-guard.ts). Readers wait while it is unsettled.
  announce(): void
  // The real paths of the homes the jail masks, once read; the worker's pid once spawned.
  settle(masked: readonly string[], worker?: number): void
  remove(): void
}

// The entry of a jail about to start over these roots (real paths); nothing is written before
// announce(). Best effort like the homes registry: a read-only ~ leaves the jail known only to its
// own process.
export function liveJailEntry(roots: readonly { real: string; fd: number }[]): LiveJailEntry {
  // A jail without roots (a warm worker before its session) writes nowhere a home could be.
  if (roots.length === 0) return { announce() {}, settle() {}, remove() {} }
  const self = processKey()
  const starttime = self.slice(self.indexOf('-') + 1)
  const name = `${self}-${randomBytes(6).toString('hex')}.json`
  let entry: LiveJail = {
    pid: process.pid,
    starttime,
    roots: roots.map((r) => r.real),
    // From the opened fds: what the jail binds, not what the path names by now.
    rootIds: roots.map((r) => identityOfFd(r.fd)),
    masked: null,
    maskedIds: [],
    readOnly: readOnlyWithin(roots.map((r) => r.real)),
  }
  let removed = false
  const write = () => {
    if (!removed) writeProcessRecord(name, JSON.stringify(entry))
  }
  return {
    announce: write,
    settle(masked, worker) {
      entry = {
        ...entry,
        masked: [...masked],
        maskedIds: masked.flatMap((m) => identityOf(m) ?? []),
        ...(worker === undefined ? {} : { worker }),
      }
      write()
    },
    remove() {
      removed = true
      // From every folder it was written in (vis-processes.ts liveJailsDirs).
      removeProcessRecord(name)
    },
  }
}

// What every jail of this process binds read-only over `roots` (confinement/mount-sources.ts
// packageMounts: the package and its dependency directories, wherever a root holds them).
function readOnlyWithin(roots: readonly string[]): string[] {
  return [realish(packageRoot), ...hostDependencyDirs()].filter((d) => roots.some((r) => within(d, r)))
}

const ENTRY = /^(\d+)-(\d+)-[0-9a-f]+\.json$/

function parse(text: string): LiveJail | undefined {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch {
    return undefined
  }
  const j = raw as Partial<LiveJail>
  const paths = (v: unknown): v is string[] =>
    Array.isArray(v) && v.every((p) => typeof p === 'string' && isAbsolute(p))
  if (typeof j.pid !== 'number' || typeof j.starttime !== 'string' || !paths(j.roots)) return undefined
  if (j.masked !== null && !paths(j.masked)) return undefined
  const ids = (v: unknown): string[] =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && /^\d+:\d+$/.test(x)) : []
  return {
    pid: j.pid,
    starttime: j.starttime,
    roots: j.roots,
    rootIds: ids(j.rootIds),
    masked: j.masked ?? null,
    maskedIds: ids(j.maskedIds),
    readOnly: paths(j.readOnly) ? j.readOnly : [],
    ...(typeof j.worker === 'number' ? { worker: j.worker } : {}),
  }
}

// The jails live now, of every vis process of this user. Stale entries are removed on the way (in
// this process's own folder; another HOME's folder is only read: liveJailsDirs).
export function liveJails(): LiveJail[] {
  const [own, ...others] = liveJailsDirs()
  // A process with HOME elsewhere writes each entry in both folders: one jail counted once.
  const seen = new Set<string>()
  const out = jailsIn(own!, true, seen)
  for (const dir of others) out.push(...jailsIn(dir, false, seen))
  return out
}

function jailsIn(dir: string, sweep: boolean, seen: Set<string>): LiveJail[] {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return []
  }
  const out: LiveJail[] = []
  const judge = livenessJudge(dir)
  for (const name of names) {
    const m = ENTRY.exec(name)
    if (!m) continue
    if (seen.has(name)) continue
    const file = join(dir, name)
    if (judge(`${m[1]}-${m[2]}`) === 'dead') {
      if (sweep) rmSync(file, { force: true })
      continue
    }
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      continue // removed since the listing: that jail ended
    }
    const jail = parse(text)
    if (jail) {
      seen.add(name)
      out.push(jail)
    }
  }
  if (sweep) sweepDeadProcesses(names, judge)
  return out
}
