import { randomBytes } from 'node:crypto'
import { mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { pidExists } from '../util/proc.js'

// Work happens in a directory beside the final path, so the final rename is
// atomic (same filesystem) and another process sees a whole tree or none.
// The name carries our pid so a later run can tell stale leftovers from a
// sibling process that is still working.
const LEFTOVER = /^\.(.+)\.(?:partial|old)-(\d+)-[0-9a-f]+$/

export function siblingTemp(finalPath: string, kind = 'partial'): string {
  const parent = dirname(finalPath)
  mkdirSync(parent, { recursive: true })
  const dir = join(parent, `.${basename(finalPath)}.${kind}-${process.pid}-${randomBytes(4).toString('hex')}`)
  mkdirSync(dir)
  return dir
}

// Removes temp dirs left beside finalPath by processes that no longer exist.
export function cleanStaleSiblings(finalPath: string): string[] {
  const parent = dirname(finalPath)
  const removed: string[] = []
  let names: string[]
  try {
    names = readdirSync(parent)
  } catch {
    return removed
  }
  for (const name of names) {
    const m = LEFTOVER.exec(name)
    if (!m || m[1] !== basename(finalPath)) continue
    const pid = Number(m[2])
    if (pid === process.pid || pidExists(pid)) continue
    rmSync(join(parent, name), { recursive: true, force: true })
    removed.push(name)
  }
  return removed
}

export type PlaceResult = 'placed' | 'exists'

// Renames tmp to finalPath. If another process got there first, returns
// 'exists' and removes tmp; the caller checks the winner's tree.
export function renameIntoPlace(tmp: string, finalPath: string): PlaceResult {
  try {
    renameSync(tmp, finalPath)
    return 'placed'
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOTEMPTY' || code === 'EEXIST') {
      rmSync(tmp, { recursive: true, force: true })
      return 'exists'
    }
    throw err
  }
}

// Replaces an existing tree: the old one is moved aside first, then removed.
export function replaceInPlace(tmp: string, finalPath: string): void {
  const aside = `${join(dirname(finalPath), `.${basename(finalPath)}.old-${process.pid}-`)}${randomBytes(4).toString('hex')}`
  let moved = false
  try {
    renameSync(finalPath, aside)
    moved = true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  renameSync(tmp, finalPath)
  if (moved) rmSync(aside, { recursive: true, force: true })
}
