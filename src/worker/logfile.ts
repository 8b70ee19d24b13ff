import { randomBytes } from 'node:crypto'
import {
  appendFileSync,
  closeSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs'
import { join } from 'node:path'
import { logsDir } from '../util/home-parts.js'

export function logDir(home: string): string {
  return logsDir(home)
}

// Opens a log file before the child exists (its pid is not known yet); `adopt` renames it
// to worker-<pid>.log once spawned. Renaming keeps the open fd valid.
export function openWorkerLog(home: string): { fd: number; path: string; adopt: (pid: number) => string } {
  const dir = logDir(home)
  mkdirSync(dir, { recursive: true })
  const tmp = join(dir, `worker-starting-${process.pid}-${randomBytes(4).toString('hex')}.log`)
  const fd = openSync(tmp, 'a', 0o600)
  return {
    fd,
    path: tmp,
    adopt(pid: number) {
      const final = join(dir, `worker-${pid}.log`)
      renameSync(tmp, final)
      return final
    },
  }
}

export function appendLog(path: string, line: string): void {
  try {
    appendFileSync(path, `${new Date().toISOString()} ${line}\n`)
  } catch {
    // The log is diagnostics only; losing a line must not break the worker.
  }
}

export function readLogTail(path: string, maxBytes = 4096): string {
  let fd: number | undefined
  try {
    const size = statSync(path).size
    const len = Math.min(size, maxBytes)
    const buf = Buffer.alloc(len)
    fd = openSync(path, 'r')
    readSync(fd, buf, 0, len, size - len)
    return buf.toString('utf8')
  } catch {
    return ''
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

// A worker's fd 2 is its log file, which the guest can write to at will (os.write(2, ...)),
// outside every root and so outside the session's disk budget. The host keeps it small: a
// live worker's log past LIVE_CAP is cut to its last KEEP bytes (checked every CHECK_MS), an
// exited worker's log is cut to KEEP, and the logs directory keeps the newest MAX_LOGS workers'.
export const LOG_LIVE_CAP = 4 * 1024 * 1024
const KEEP = 64 * 1024
const CHECK_MS = 250
const MAX_LOGS = 64

// Keeps the last `keep` bytes of the file, with a line saying how much went. The writer has it
// open O_APPEND, so what it writes next lands after the kept tail.
export function trimLog(path: string, keep = KEEP): void {
  let fd: number | undefined
  try {
    fd = openSync(path, 'r+')
    const size = statSync(path).size
    if (size <= keep) return
    const tail = Buffer.alloc(keep)
    readSync(fd, tail, 0, keep, size - keep)
    ftruncateSync(fd, 0)
    const note = Buffer.from(
      `${new Date().toISOString()} [host] log cut: ${size - keep} earlier bytes dropped\n`,
    )
    writeSync(fd, note, 0, note.length, 0)
    writeSync(fd, tail, 0, tail.length, note.length)
  } catch {
    // Diagnostics only.
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

// Watches a live worker's log; returns the stop function (which trims it one last time).
export function capLog(path: () => string): () => void {
  const timer = setInterval(() => {
    try {
      if (statSync(path()).size > LOG_LIVE_CAP) trimLog(path())
    } catch {
      // gone: nothing to cap
    }
  }, CHECK_MS)
  timer.unref()
  return () => {
    clearInterval(timer)
    trimLog(path())
  }
}

// The oldest worker logs past MAX_LOGS are removed (each worker's is named by its pid).
export function pruneLogs(home: string): void {
  const dir = logDir(home)
  try {
    const logs = readdirSync(dir)
      .filter((f) => /^worker-\d+\.log$/.test(f))
      .map((f) => ({ f, t: statSync(join(dir, f)).mtimeMs }))
      .sort((a, b) => b.t - a.t)
    for (const { f } of logs.slice(MAX_LOGS)) rmSync(join(dir, f), { force: true })
  } catch {
    // Diagnostics only.
  }
}
