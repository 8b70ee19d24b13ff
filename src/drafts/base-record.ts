import type { Stats } from 'node:fs'
import { readFile, rename, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { z } from 'zod'
import type { Tree } from '../confinement/beneath.js'
import { realEntry } from './apply.js'
import type { Change } from './changes.js'

// What a draft knows about the real root at its base, for the paths it writes.
//
// A real file deleted after the draft began leaves no ctime to judge, and the draft's lower
// layer is the live real root: once the file is gone, the draft's version of it looks like
// an addition. overlayfs' own marker cannot tell the two apart: this kernel sets
// `user.overlay.origin` on a copy-up, but a file saved by writing a new one and renaming it
// over the old (editors, `write`/`patch`) carries none, and a file renamed inside the draft
// carries one for a path that never existed. Listing the whole real tree at the start would
// make a draft cost its tree's size. What is cheap and sure is the real directory's ctime:
// it moves whenever an entry is added to or removed from it. So a draft's file the real root
// does not have is a deletion since the base (a conflict) unless the draft knows the path was
// absent at the base: it saw the path missing while the nearest real entry above it was still
// older than the base. That is learnt at every scan (after each block, diff and apply) and
// kept in the draft's directory, so it holds across restarts and however the real directory
// changes later. A path first seen missing below a real directory that changed since the base
// cannot be told apart and counts as a conflict: apply never brings a real deletion back
// without a person deciding.
const RecordSchema = z.object({ absent: z.array(z.string()) })

export class BaseRecord {
  private constructor(
    private readonly file: string,
    private readonly baseAt: number,
    private readonly absent: Set<string>,
  ) {}

  static async open(dir: string, baseAt: number): Promise<BaseRecord> {
    const file = join(dir, 'base-record.json')
    const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined
      throw err
    })
    const r = text === undefined ? { absent: [] } : RecordSchema.parse(JSON.parse(text))
    return new BaseRecord(file, baseAt, new Set(r.absent))
  }

  // Learns from one scan's view of the real root (changes.ts's Observer), then keeps it.
  async observe(real: Tree, seen: [string, Stats | undefined][]): Promise<void> {
    let grew = false
    const older = new Map<string, Promise<boolean>>()
    for (const [path, st] of seen) {
      if (st || this.absent.has(path)) continue
      if (await this.aboveIsOlder(real, path, older)) {
        this.absent.add(path)
        grew = true
      }
    }
    if (grew) await this.save()
  }

  // The draft's files the real root does not have now and may have had at the base: the
  // real root deleted them since (ours writes the draft's version, theirs keeps them gone).
  async vanished(real: Tree, changes: Change[]): Promise<string[]> {
    const out: string[] = []
    for (const c of changes) {
      if (c.status !== 'added' && c.status !== 'renamed') continue
      if (this.absent.has(c.path)) continue
      if (!(await realEntry(real, c.path))) out.push(c.path)
    }
    return out
  }

  // The nearest entry of the real root above path is older than the base: nothing below it
  // was added or removed since, so path's absence now was its absence then. Walked from the
  // root down, never through a real symlink (it would lead out of the root).
  private async aboveIsOlder(
    real: Tree,
    path: string,
    memo: Map<string, Promise<boolean>>,
  ): Promise<boolean> {
    const parent = dirname(path)
    let p = memo.get(parent)
    if (!p) {
      p = (async () => {
        let st = await real.lstat('')
        if (!st) return false
        let cur = ''
        for (const comp of parent === '.' ? [] : parent.split('/')) {
          cur = cur ? `${cur}/${comp}` : comp
          const next = await real.lstat(cur)
          if (!next) break
          st = next
          if (!next.isDirectory()) break
        }
        return st.ctimeMs < this.baseAt
      })()
      memo.set(parent, p)
    }
    return p
  }

  private async save(): Promise<void> {
    const tmp = `${this.file}.${process.pid}.${Math.random().toString(36).slice(2)}`
    await writeFile(tmp, JSON.stringify({ absent: [...this.absent] }))
    await rename(tmp, this.file)
  }
}
