import { randomBytes } from 'node:crypto'
import { appendFileSync, closeSync, mkdirSync, openSync, readSync, renameSync, statSync } from 'node:fs'
import { join } from 'node:path'

export function logDir(home: string): string {
  return join(home, 'logs')
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
