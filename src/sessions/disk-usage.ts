import { lstatSync, readdirSync, type Stats } from 'node:fs'

// How long one synchronous stretch of a walk may hold the event loop before it yields.
const SLICE_MS = 4
// Entries between two looks at the clock.
const CLOCK_EVERY = 128
// A listing is reused only when the directory had not changed for this long when it was read:
// directory timestamps come from a coarse clock (a few ms), so a change right after a listing
// could leave the mtime as it was ("racy" listings are read again every pass).
const QUIET_MS = 50

// What the roots hold: allocated bytes (st_blocks * 512, what the disk gives up: a sparse
// file counts what it really holds, a 1-byte file its whole block) and apparent bytes
// (st_size), each hard-linked inode once.
export type Usage = { allocated: number; apparent: number; entries: number; ms: number }

type Listing = { ino: number; mtimeMs: number; ctimeMs: number; names: string[]; seen: number }

const noEntry = { throwIfNoEntry: false } as const

function lstatOr(path: string): Stats | undefined {
  try {
    return lstatSync(path, noEntry)
  } catch {
    // Unreadable (EACCES) or gone mid-walk: it is not counted.
    return undefined
  }
}

// Measures trees of directories without following symlinks or leaving them. Every entry is
// lstat-ed on every pass (a file's size changes without touching its directory); a
// directory's list of names is read again only when the directory itself changed. The walk
// runs in short synchronous slices and yields between them, so a big tree costs time, not
// the host's responsiveness.
export class TreeUsage {
  private readonly listings = new Map<string, Listing>()
  private pass = 0

  async measure(paths: readonly string[]): Promise<Usage> {
    const t0 = performance.now()
    const pass = ++this.pass
    const seenInodes = new Set<string>()
    let allocated = 0
    let apparent = 0
    let entries = 0
    let sliceStart = t0
    const count = (st: Stats) => {
      entries++
      if (st.nlink > 1 && !st.isDirectory()) {
        const key = `${st.dev}:${st.ino}`
        if (seenInodes.has(key)) return
        seenInodes.add(key)
      }
      allocated += st.blocks * 512
      apparent += st.size
    }
    const stack: Array<{ path: string; st: Stats }> = []
    for (const p of new Set(paths)) {
      const st = lstatOr(p)
      if (st?.isDirectory()) stack.push({ path: p, st })
      else if (st) count(st)
    }
    while (stack.length > 0) {
      const { path, st } = stack.pop()!
      count(st)
      const names = this.names(path, st, pass)
      for (const name of names) {
        if (entries % CLOCK_EVERY === 0 && performance.now() - sliceStart > SLICE_MS) {
          await new Promise((resolve) => setImmediate(resolve))
          sliceStart = performance.now()
        }
        const child = `${path}/${name}`
        const cst = lstatOr(child)
        if (cst === undefined) continue
        if (cst.isDirectory()) stack.push({ path: child, st: cst })
        else count(cst)
      }
    }
    // Directories gone since (or never reached again) are forgotten.
    for (const [dir, l] of this.listings) if (l.seen !== pass) this.listings.delete(dir)
    return { allocated, apparent, entries, ms: performance.now() - t0 }
  }

  private names(dir: string, st: Stats, pass: number): string[] {
    const cached = this.listings.get(dir)
    if (cached && cached.ino === st.ino && cached.mtimeMs === st.mtimeMs && cached.ctimeMs === st.ctimeMs) {
      cached.seen = pass
      return cached.names
    }
    let names: string[]
    const readAt = Date.now()
    try {
      names = readdirSync(dir)
    } catch {
      return []
    }
    if (readAt - Math.max(st.mtimeMs, st.ctimeMs) > QUIET_MS) {
      this.listings.set(dir, { ino: st.ino, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, names, seen: pass })
    } else this.listings.delete(dir)
    return names
  }
}
