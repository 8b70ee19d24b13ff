import { closeSync, openSync, readdirSync, readSync } from 'node:fs'
import { processTree } from './proctree.js'

// How long a set of threads waited for a CPU: runnable, but another task was running. The
// kernel counts it per thread (/proc/<pid>/task/<tid>/schedstat, second field, ns). Read
// around one round trip, it says how much of that round trip was spent waiting in a run
// queue rather than in our code: on a 2-vCPU machine shared with other work, that wait is
// what a round trip's p99 mostly is (docs/performance.md).
//
// Only threads that do work on the path are read (found by their CPU time moving while the
// caller warms the path up): a worker tree has a dozen threads, most idle, and every read is
// a syscall made between two timed samples.
export class RunQueueProbe {
  private readonly fds: number[]
  private readonly buf = Buffer.alloc(128)

  private constructor(fds: number[]) {
    this.fds = fds
  }

  // The threads of these process trees (and this process's main thread) whose run time
  // moves while `warm` runs.
  static async busyThreads(roots: number[], warm: () => Promise<void>): Promise<RunQueueProbe> {
    // This process: its main thread only (the event loop that sends and receives).
    const tasks = [`/proc/${process.pid}/task/${process.pid}/schedstat`]
    for (const pid of roots.flatMap((root) => processTree(root))) {
      try {
        for (const tid of readdirSync(`/proc/${pid}/task`)) tasks.push(`/proc/${pid}/task/${tid}/schedstat`)
      } catch {
        // the process ended while we looked
      }
    }
    const all = new RunQueueProbe(
      tasks.map((path) => {
        try {
          return openSync(path, 'r')
        } catch {
          return -1
        }
      }),
    )
    const before = all.fds.map((fd) => all.field(fd, 0))
    await warm()
    const after = all.fds.map((fd) => all.field(fd, 0))
    const keep = all.fds.filter((fd, i) => fd >= 0 && after[i]! > before[i]!)
    for (const fd of all.fds) if (fd >= 0 && !keep.includes(fd)) closeSync(fd)
    return new RunQueueProbe(keep)
  }

  get threads(): number {
    return this.fds.length
  }

  // Total run-queue wait of the threads so far, in microseconds.
  waitedUs(): number {
    let ns = 0
    for (const fd of this.fds) ns += this.field(fd, 1)
    return ns / 1000
  }

  close(): void {
    for (const fd of this.fds) closeSync(fd)
    this.fds.length = 0
  }

  // schedstat: "<run ns> <run-queue wait ns> <timeslices>"; a thread that ended reads as 0.
  private field(fd: number, i: number): number {
    if (fd < 0) return 0
    try {
      const n = readSync(fd, this.buf, 0, this.buf.length, 0)
      return Number(this.buf.toString('latin1', 0, n).split(' ')[i] ?? 0)
    } catch {
      return 0
    }
  }
}

// Of the slowest 1% of samples, the share whose run-queue wait covers at least half of what
// they took beyond the median: how much of the tail is waiting for a CPU.
export function tailWaitShare(latUs: number[], waitUs: number[]): number {
  const order = latUs.map((_, i) => i).sort((a, b) => latUs[a]! - latUs[b]!)
  const median = latUs[order[Math.floor(order.length / 2)]!]!
  const tail = order.slice(Math.floor(order.length * 0.99))
  if (tail.length === 0) return 0
  const explained = tail.filter((i) => waitUs[i]! >= 0.5 * (latUs[i]! - median)).length
  return explained / tail.length
}

// Each sample with its run-queue wait taken out (never below zero).
export const withoutWaits = (latUs: number[], waitUs: number[]): number[] =>
  latUs.map((x, i) => Math.max(0, x - (waitUs[i] ?? 0)))
