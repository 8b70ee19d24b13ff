import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import {
  constants as C,
  closeSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { userDefaultHome, usualDefaultHome } from './home-registry.js'
import { hostProgramPath } from './host-programs.js'

// Which vis processes of this user run now, as seen from any of them. What a vis process leaves for
// the others (its jails' entries, live-jails.ts; the folders it keeps its jails' files in,
// util/host-state-dirs.ts) is named after it, <pid>-<starttime>, and counts only while it
// runs. A pid says nothing to a vis process in another pid namespace (an editor packaged with
// Flatpak or Snap, a dev container, firejail: same user, same HOME), whose /proc has other
// processes under those numbers. So each vis process, once it is first known to others, holds a
// FIFO <pid>-<starttime>.fifo open for reading for the rest of its life (the kernel closes it
// however the process ends): an open for writing without blocking succeeds while it runs and fails
// with ENXIO once it is gone, from every pid namespace sharing the file.
//
// The folder is the user's default home, which every jail masks: no sandbox can plant or remove
// these files.

export const liveJailsDir = () => join(userDefaultHome(), 'live-jails')

// The folders a reader takes other processes' jails from, and a writer records in: its own, and the
// one under the user's home from the password database when HOME names another place. A reader:
// a `vis runtime stage` or `vis bundle` run with HOME pointed elsewhere must still see the jails
// of a `vis serve` started with the usual HOME (thirteenth outsider pass). A writer: a `vis serve`
// run with its own HOME (a service, a container) records its jails, FIFO and temp places in the
// usual folder too, or the person's vis processes, reading only theirs, never see its roots
// (fourteenth outsider pass: an mcp.json env named such a root and passed). Reading more folders
// only adds places to refuse.
export function liveJailsDirs(): string[] {
  const own = liveJailsDir()
  const usual = usualDefaultHome()
  return usual === undefined ? [own] : [own, join(usual, 'live-jails')]
}

// The start time (clock ticks since boot) of a running process in this pid namespace, or undefined
// for a gone or zombie one: with the pid it names one process for good.
export function startTimeOf(pid: number): string | undefined {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  // The command name (field 2) may hold spaces and ')': count fields from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  if (fields[0] === 'Z' || fields[0] === 'X') return undefined
  return fields[19]
}

let key: string | undefined
// This process's name in the folder: <pid>-<starttime>.
export function processKey(): string {
  key ??= `${process.pid}-${startTimeOf(process.pid) ?? '0'}`
  return key
}

export const KEY = /^(\d+)-(\d+)$/

let announced = false
// Makes this process known as live, once: call it before writing anything other processes judge by
// this process's liveness. Best effort: without mkfifo (or a writable ~) others fall back to /proc.
export function announceProcess(): void {
  if (announced) return
  announced = true
  const mkfifo = hostProgramPath('mkfifo')
  if (mkfifo === undefined) return
  // One FIFO in each folder this process records in: a reader judges liveness in the folder it
  // reads (livenessJudge(dir)).
  for (const dir of liveJailsDirs()) fifoIn(dir, mkfifo)
}

function fifoIn(dir: string, mkfifo: string): void {
  // Made and opened under a name no reader judges, then renamed into place: a reader never sees
  // this process's FIFO without its reader (which it would take for a dead process's).
  const tmp = join(dir, `.${processKey()}-${randomBytes(6).toString('hex')}.fifo-new`)
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const made = spawnSync(mkfifo, ['-m', '600', tmp], { stdio: 'ignore', timeout: 10_000 })
    if (made.status !== 0) return
    // Never closed: the kernel closes it when this process ends, whatever ends it. Node opens with
    // O_CLOEXEC, so no program this process starts (a jail, a tool) holds it open after it.
    openSync(tmp, C.O_RDONLY | C.O_NONBLOCK)
    renameSync(tmp, join(dir, `${processKey()}.fifo`))
  } catch {
    // best effort, as above
  } finally {
    rmSync(tmp, { force: true })
  }
}

// Writes `text` as `name` in every folder of liveJailsDirs() (0600, whole or not at all) once this
// process is announced: a reader never finds a record of this process (its jails' entries, its
// host state record) without its FIFO. Best effort like the FIFO: false when its own folder cannot
// be written (a read-only ~); the usual folder is tried as well either way.
export function writeProcessRecord(name: string, text: string): boolean {
  announceProcess()
  let ownWritten = false
  for (const [i, dir] of liveJailsDirs().entries()) {
    const file = join(dir, name)
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 })
      writeFileSync(`${file}.tmp`, text, { mode: 0o600 })
      renameSync(`${file}.tmp`, file)
      if (i === 0) ownWritten = true
    } catch {
      // as above
    }
  }
  return ownWritten
}

// Removes this process's record `name` from every folder it was written in.
export function removeProcessRecord(name: string): void {
  for (const dir of liveJailsDirs()) rmSync(join(dir, name), { force: true })
}

export type Liveness = 'live' | 'dead' | 'unknown'

// Whether the vis process named `k` (<pid>-<starttime>) runs: by its FIFO, else (no FIFO: it had
// no mkfifo, or it is gone and a reader removed it) by its pid in this namespace's /proc.
// 'unknown' when its FIFO is there but cannot be tried: never a reason to remove what it left.
export function livenessOf(k: string, dir: string = liveJailsDir()): Liveness {
  const m = KEY.exec(k)
  if (!m) return 'unknown'
  const fifo = join(dir, `${k}.fifo`)
  try {
    if (!lstatSync(fifo).isFIFO()) return 'unknown'
    closeSync(openSync(fifo, C.O_WRONLY | C.O_NONBLOCK | C.O_NOFOLLOW))
    return 'live'
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === 'ENXIO') return 'dead'
    if (code !== 'ENOENT') return 'unknown'
  }
  return startTimeOf(Number(m[1])) === m[2] ? 'live' : 'dead'
}

// One reading of the folder judges each process once.
export function livenessJudge(dir: string = liveJailsDir()): (k: string) => Liveness {
  const seen = new Map<string, Liveness>()
  return (k) => {
    let v = seen.get(k)
    if (v === undefined) {
      v = livenessOf(k, dir)
      seen.set(k, v)
    }
    return v
  }
}

// What a process leaves beside its jails' entries: its FIFO and its host state record.
const PROCESS_FILE = /^(\d+-\d+)\.(fifo|state\.json)$/

// Removes the FIFOs and records of processes `judge` finds dead, among the folder's `names`. Called
// after their jails' entries are handled, so a reader never finds a dead process's entry without
// its FIFO while another removes them.
export function sweepDeadProcesses(names: readonly string[], judge: (k: string) => Liveness): void {
  for (const name of names) {
    const m = PROCESS_FILE.exec(name)
    if (m && judge(m[1]!) === 'dead') rmSync(join(liveJailsDir(), name), { force: true })
  }
}
