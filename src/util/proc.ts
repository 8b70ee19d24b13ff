import { readFileSync } from 'node:fs'

// Whether a process still runs: a zombie (dead, waiting for a parent to reap it) does not.
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name is in parentheses and may contain anything; the state follows the last ')'.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state !== 'Z' && state !== 'X'
  } catch {
    return false
  }
}

// Whether a pid names any process at all, ours or not (EPERM: it exists, owned by someone
// else). Used to tell leftovers of a dead process from those of one still working.
export function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}
