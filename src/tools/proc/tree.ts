import { readdirSync, readFileSync } from 'node:fs'

interface Proc {
  pid: number
  ppid: number
  pgrp: number
  sid: number
}

// Every tree a tool starts carries this variable with its own token; a
// daemon that both double-forks and calls setsid still inherits it.
export const TREE_MARK = 'VIS_TOOL_TREE'

export function newTreeToken(): string {
  return `${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`
}

function carriesMark(pid: number, token: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`).includes(`${TREE_MARK}=${token}\0`)
  } catch {
    return false
  }
}

function processes(): Proc[] {
  const out: Proc[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      // The command name is in parentheses and may contain anything; fields follow the last ')'.
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      // Zombies are already dead; their parent reaps them.
      if (f[0] === 'Z' || f[0] === 'X') continue
      out.push({ pid: Number(name), ppid: Number(f[1]), pgrp: Number(f[2]), sid: Number(f[3]) })
    } catch {}
  }
  return out
}

// Everything a started process left behind: its descendants, and anything
// in a session or process group led by the root (tools start every process
// detached, so it leads both) or by a descendant; that catches daemons that
// double-forked away from the parent chain, and (given the tree's token)
// anything still carrying its mark. The host's own session and group
// are never included.
export function processTree(root: number, token?: string): number[] {
  const all = processes()
  const self = all.find((p) => p.pid === process.pid)
  const spared = new Set([self?.sid, self?.pgrp, 0, 1])
  const found = new Set<number>()
  const groups = new Set<number>(spared.has(root) ? [] : [root])
  for (let changed = true; changed; ) {
    changed = false
    for (const p of all) {
      if (found.has(p.pid) || p.pid === process.pid) continue
      const member =
        p.pid === root ||
        found.has(p.ppid) ||
        groups.has(p.sid) ||
        groups.has(p.pgrp) ||
        (token !== undefined && carriesMark(p.pid, token))
      if (member) {
        found.add(p.pid)
        for (const g of [p.sid, p.pgrp]) if (g === p.pid && !spared.has(g)) groups.add(g)
        changed = true
      }
    }
  }
  return [...found]
}

export function killTree(root: number, token?: string, signal: NodeJS.Signals = 'SIGKILL'): number {
  let killed = 0
  for (let round = 0; round < 5; round++) {
    const pids = processTree(root, token)
    if (pids.length === 0) break
    for (const pid of pids) {
      try {
        process.kill(pid, signal)
        killed++
      } catch {}
    }
  }
  return killed
}

// Liveness is asked the same way of every process the host tracks.
export { isRunning as isAlive } from '../../util/proc.js'
