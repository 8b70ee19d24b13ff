import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  opendirSync,
  openSync,
  readlinkSync,
  type Stats,
  statSync,
} from 'node:fs'
import { basename, dirname, join, relative, resolve, sep } from 'node:path'
import type { ErrorCode } from './error-catalogue.js'
import { VisError } from './errors.js'
import { sandboxWrittenParts } from './home-parts.js'
import { registeredHomes } from './home-registry.js'
import { within } from './path-within.js'
import { readBounded } from './read-bounded.js'
import { realish } from './real-path.js'
import { type WritablePlaces, writablePlaces } from './writable-roots.js'

// The vis home is masked in every jail, but a file or folder IN it may be a link (a dotfiles
// repository's mcp.json, an extension developed in a project and linked into ~/.vis/extensions).
// Where such a link leads is not masked: with a session on that folder its block rewrites what the
// host reads next as configuration or imports as trusted code (seventeenth outsider pass). So every
// such file is judged where it really is: by each link on the way from the home and by the real
// path of what was opened, against every place a sandbox may write now (writable-roots.ts: this
// process's session roots, every live jail's) and the parts of a vis home a sandbox writes
// (home-parts.ts: outboxes, drafts, blobs, worker logs).
//
// The files of a vis home the host reads as configuration, each judged here before use:
//   mcp.json             servers the host starts, unconfined (engine/mcp-config.ts)
//   agent.json           providers, approvals, mode (agent/config.ts)
//   trust/projects.json  which project extension folders load (extensions/trust.ts)
//   extensions/*         trusted code, scanned and loaded by extensions/discover.ts and registry.ts
// (prompts/*.md are read with no link followed at all: agent/read-text.ts.)
// A HARD link is neither a link on the way nor a real path elsewhere (eighteenth outsider pass:
// `ln W/mcp.json ~/.vis/mcp.json`, a session on W rewrote it in place and a second engine started
// the block's server on the host): a file with more than one name on a root's device is refused
// too, by hardLinkExposure, as the HOME walk judges one (tool-home.ts hardLinkInRoot).

// Links followed from one path before giving up (the kernel's own limit is 40).
const MAX_HOPS = 40
// A configuration file larger than this is not one a person wrote.
const MAX_CONFIG_BYTES = 16 * 1024 * 1024

// Where a sandbox may write `path` (by its written path, its real path or its parent's real path),
// if anywhere: a writable root, or a sandbox-written part of a vis home. A place in this home
// itself is not a root's to write even when a root holds the home (a session on ~ with ~/.vis):
// every jail masks the home, and openHome refused it otherwise; only its sandbox-written parts
// count there. `path` itself, not where it leads when it is a link: callers judge each hop.
function writerOf(path: string, places: WritablePlaces, home: string): string | undefined {
  const at = join(realish(dirname(path)), basename(path))
  const realHome = realish(home)
  if (within(at, realHome)) return sandboxWrittenParts(realHome).find((part) => within(at, part))
  const root = places.holding(at)
  if (root !== undefined) return root
  for (const h of new Set([home, ...registeredHomes()].map(realish)))
    for (const part of sandboxWrittenParts(h)) if (within(at, part)) return part
  return undefined
}

// Every link met on the way from `home` to `path`: each component below the home that is a link,
// and each link those lead to in turn (bounded). A link that lies in a writable place can be
// turned anywhere by a block, even when it leads somewhere safe now.
function linksOnTheWay(home: string, path: string): string[] {
  const out: string[] = []
  const rel = relative(home, path)
  if (rel.startsWith('..')) return out
  let at = home
  for (const part of rel.split(sep)) {
    if (part === '') continue
    let cur = join(at, part)
    for (let i = 0; i < MAX_HOPS; i++) {
      let target: string
      try {
        if (!lstatSync(cur).isSymbolicLink()) break
        target = readlinkSync(cur)
      } catch {
        break
      }
      out.push(cur)
      cur = resolve(realish(dirname(cur)), target)
    }
    at = join(at, part)
  }
  return out
}

// `why`, when set, says how `place` decides what `path` holds in place of "leads into".
export type Exposure = { path: string; place: string; via?: string; why?: string }

// The session root whose device holds the regular file `st` describes when that file has more than
// one name (hard links), if one does. Another name of it may lie in that root, where a block
// rewrites it in place: the audit hook's refusal to open a many-link file for writing is a check
// before the kernel's open, which a block passes by swapping the name (eighteenth outsider pass).
// Whether the other name lies in the root would take a walk of every root (a project tree, any
// size) at each read; one stat of each root is cheap, and a person's vis configuration is rarely
// hard-linked (the fix is a copy, or a symbolic link to a place outside every root). Roots only:
// the sandbox-written parts of a home are files the host or a block made there, never another
// name of the person's configuration.
function hardLinkedRoot(st: Stats, places: WritablePlaces): string | undefined {
  if (!st.isFile() || st.nlink < 2) return undefined
  for (const r of places.roots) {
    let dev: number
    try {
      dev = statSync(r).dev
    } catch {
      continue
    }
    if (dev === st.dev) return r
  }
  return undefined
}

// The hard-link judgement of `path` (its file: `st`, or stat'ed through any links) as an exposure,
// if it is one. Shared by every reader of the home's files (readHomeFile, on the open file) and the
// extension entries (extensionEntryExposure, on each file of a package).
export function hardLinkExposure(
  path: string,
  places: WritablePlaces,
  st?: Stats,
  via?: string,
): Exposure | undefined {
  let s = st
  if (s === undefined) {
    try {
      s = statSync(path)
    } catch {
      return undefined
    }
  }
  const root = hardLinkedRoot(s, places)
  if (root === undefined) return undefined
  return {
    path,
    place: root,
    ...(via !== undefined ? { via } : {}),
    why: `has ${s.nlink} names (hard links) on the device of the session root ${root}, and another name may lie in that root`,
  }
}

// Whether anything a sandbox may write decides what `path` (below `home`) holds: a link on the way
// lying in a writable place, or its real path lying in one.
export function homeEntryExposure(
  home: string,
  path: string,
  places: WritablePlaces = writablePlaces(),
): Exposure | undefined {
  for (const link of linksOnTheWay(home, path)) {
    const place = writerOf(link, places, home)
    if (place !== undefined) return { path, place, via: link }
    // Where the link leads, as a path the block may make later.
    const to = resolve(realish(dirname(link)), readlinkSafe(link))
    const placeTo = writerOf(to, places, home)
    if (placeTo !== undefined) return { path, place: placeTo, via: link }
  }
  const real = realish(path)
  const place = writerOf(real, places, home)
  if (place !== undefined) return { path, place, ...(real !== resolve(path) ? { via: real } : {}) }
  return hardLinkExposure(path, places)
}

function readlinkSafe(p: string): string {
  try {
    return readlinkSync(p)
  } catch {
    return p
  }
}

// What `path` is, as a sentence naming where a sandbox writes it.
export function exposureText(e: Exposure): string {
  const via = e.via === undefined ? '' : ` (through ${e.via})`
  if (e.why !== undefined) return `${e.path}${via} ${e.why}, which a sandbox can write`
  return `${e.path} leads into ${e.place}${via}, which a sandbox can write`
}

// A file of the vis home the host uses as configuration or code, as text; undefined when there is
// none. Refused, `code`, when a link on the way or the file it opened lies where a sandbox writes:
// judged on the open file itself (its real path through /proc/self/fd), so what is checked is what
// is read, whatever a block swaps in meanwhile. Also refused: a FIFO or device (reading could hang
// the host), a file past the bound.
export function readHomeFile(
  home: string,
  path: string,
  code: ErrorCode,
  op: string,
  maxBytes = MAX_CONFIG_BYTES,
): string | undefined {
  const refuse = (why: string, extra: Record<string, unknown> = {}): never => {
    throw new VisError(
      code,
      `${path} was not read: ${why}. Whatever a sandbox writes there would steer this host outside every sandbox. ` +
        'Keep the file itself in the vis home (not a link into a folder a session works on), or end that session.',
      { op, path, ...extra },
    )
  }
  const places = writablePlaces()
  const before = homeEntryExposure(home, path, places)
  if (before !== undefined) refuse(exposureText(before), { place: before.place })
  let fd: number
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) refuse('it is not a regular file')
    // What was opened, wherever the links led at the moment of opening.
    const opened = readlinkSync(`/proc/self/fd/${fd}`)
    const place = writerOf(opened, places, home)
    if (place !== undefined) refuse(exposureText({ path, place, via: opened }), { place })
    // The open file's own count of names: a hard link made after the look above is seen here.
    const hard = hardLinkExposure(path, places, st)
    if (hard !== undefined) refuse(exposureText(hard), { place: hard.place, links: st.nlink })
    const body = readBounded(fd, maxBytes)
    if (body === undefined) refuse(`it is larger than ${maxBytes} bytes`)
    return body!.toString('utf8')
  } finally {
    closeSync(fd)
  }
}

// Entries a package extension holds, walked (links followed, each counted) up to these bounds.
const MAX_PACKAGE_ENTRIES = 5000
const MAX_PACKAGE_DEPTH = 32

// Whether a sandbox may write anything an extension entry of the home (a file, or a package
// folder and everything in it) consists of: its links on the way, its real path, and each entry
// inside a package by its own path and real path. A package past the bounds counts as exposed.
export function extensionEntryExposure(home: string, path: string): Exposure | undefined {
  const places = writablePlaces()
  const top = homeEntryExposure(home, path, places)
  if (top !== undefined) return top
  let st: ReturnType<typeof lstatSync>
  try {
    st = lstatSync(realish(path))
  } catch {
    return undefined
  }
  if (!st.isDirectory()) return undefined
  let seen = 0
  const walk = (d: string, depth: number): Exposure | undefined => {
    if (depth > MAX_PACKAGE_DEPTH)
      return { path, place: `more than ${MAX_PACKAGE_DEPTH} folders deep at ${d}` }
    let dir: ReturnType<typeof opendirSync>
    try {
      dir = opendirSync(d)
    } catch {
      return undefined
    }
    const names: string[] = []
    try {
      for (let e = dir.readSync(); e !== null; e = dir.readSync()) {
        if (e.name === '__pycache__') continue
        names.push(e.name)
        if (++seen > MAX_PACKAGE_ENTRIES) return { path, place: `more than ${MAX_PACKAGE_ENTRIES} entries` }
      }
    } finally {
      dir.closeSync()
    }
    for (const name of names) {
      const full = join(d, name)
      const place = writerOf(full, places, home) ?? writerOf(realish(full), places, home)
      if (place !== undefined) return { path, place, via: full }
      const st = statOrNot(full)
      const hard = st === undefined ? undefined : hardLinkExposure(path, places, st, full)
      if (hard !== undefined) return hard
      let isDir = false
      try {
        isDir = lstatSync(realish(full)).isDirectory()
      } catch {
        isDir = false
      }
      if (isDir) {
        const inner = walk(full, depth + 1)
        if (inner !== undefined) return inner
      }
    }
    return undefined
  }
  return walk(path, 0)
}

function statOrNot(path: string): Stats | undefined {
  try {
    return statSync(path)
  } catch {
    return undefined
  }
}
