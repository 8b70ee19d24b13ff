import { readdirSync, readFileSync } from 'node:fs'
import { isRunning } from '../util/proc.js'

// A jailed worker is a small tree (bubblewrap, its pid-namespace init when the helper is
// not init itself, the helper), so
// memory and liveness questions are asked of the whole tree, found through /proc.
export function processTree(root: number): number[] {
  const out: number[] = []
  const queue = [root]
  while (queue.length > 0) {
    const pid = queue.shift()!
    out.push(pid)
    let tasks: string[]
    try {
      tasks = readdirSync(`/proc/${pid}/task`)
    } catch {
      continue
    }
    for (const tid of tasks) {
      try {
        const kids = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim()
        if (kids) queue.push(...kids.split(/\s+/).map(Number))
      } catch {
        // the task ended while we looked
      }
    }
  }
  return out
}

export function rssKb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) : 0
  } catch {
    return 0
  }
}

export function treeRssMb(root: number): number {
  return processTree(root).reduce((sum, pid) => sum + rssKb(pid), 0) / 1024
}

// Waits (bounded) until none of these processes runs.
export async function waitGone(pids: number[], timeoutMs = 2000): Promise<boolean> {
  const until = Date.now() + timeoutMs
  for (;;) {
    if (!pids.some(isRunning)) return true
    if (Date.now() > until) return false
    await new Promise((r) => setTimeout(r, 5))
  }
}

// Memory only this process holds (private pages): what one more worker really costs,
// with the node binary and libraries shared among workers and the host left out.
export function privateKb(pid: number): number {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
    const field = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(text)?.[1] ?? 0)
    return field('Private_Clean') + field('Private_Dirty')
  } catch {
    return 0
  }
}

export function treePrivateMb(root: number): number {
  return processTree(root).reduce((sum, pid) => sum + privateKb(pid), 0) / 1024
}

// Proportional set size: private pages plus each shared page divided by how many processes map
// it, so summing it over trees never counts a shared library twice.
export function pssKb(pid: number): number {
  try {
    return Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0)
  } catch {
    return 0
  }
}

export function treePssMb(root: number): number {
  return processTree(root).reduce((sum, pid) => sum + pssKb(pid), 0) / 1024
}

const TICK_MS = 10 // USER_HZ on Linux: /proc/<pid>/stat counts CPU time in 1/100 s

// CPU time (ms) this tree has used so far: every live thread's run time from schedstat
// (nanoseconds, so a short start-up is not rounded to ticks) plus what children that were
// already reaped used. On a loaded machine this is what a start costs; wall time also
// counts the wait for a CPU.
export function treeCpuMs(root: number): number {
  let ms = 0
  for (const pid of processTree(root)) {
    try {
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        try {
          ms += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6
        } catch {
          // the thread ended while we looked
        }
      }
      // cutime and cstime (fields 16 and 17 of proc(5)); the split starts at field 3.
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
      ms += (Number(f[13]) + Number(f[14])) * TICK_MS
    } catch {
      // the process ended while we looked
    }
  }
  return ms
}
