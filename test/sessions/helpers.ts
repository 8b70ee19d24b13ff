import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isRunning } from '../../src/util/proc.js'

// Each test file gets its own vis home and workspace root.
export function tempHome(prefix: string): { home: string; root: string } {
  const home = mkdtempSync(join(tmpdir(), `vis-${prefix}-home-`))
  const root = mkdtempSync(join(tmpdir(), `vis-${prefix}-root-`))
  process.env.VIS_HOME = home
  process.on('exit', () => {
    for (const dir of [home, root]) rmSync(dir, { recursive: true, force: true })
  })
  return { home, root }
}

// This process's direct children (every worker's tree starts with one), from each of its threads.
export function children(): Set<number> {
  const out = new Set<number>()
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const kids = readFileSync(`/proc/self/task/${tid}/children`, 'utf8').trim()
      for (const k of kids ? kids.split(/\s+/) : []) out.add(Number(k))
    } catch {
      // the thread ended while we looked
    }
  }
  return out
}

// A zombie waiting to be reaped no longer runs anything: it counts as gone.
export const isAlive = isRunning

export async function waitFor(cond: () => boolean, ms = 5000, what = 'condition'): Promise<void> {
  const until = Date.now() + ms
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

export const python = process.env.VIS_PYTHON_VERSION
