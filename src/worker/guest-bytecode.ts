import { execFile } from 'node:child_process'
import { closeSync, existsSync, openSync, readdirSync, readSync, rmSync, statSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { errorMessage } from '../util/errors.js'
import { appendLog } from './logfile.js'

// Compiled bytecode (.pyc) for the guest runtime's modules, beside them in __pycache__.
//
// Workers never write bytecode (PyConfig.write_bytecode = 0: the package is read-only in the
// jail, and a cache a guest could write would let one session plant code in the next), so
// without these files every worker compiled all of vis-guest/ from source while installing
// its runtime: ~40 ms of a cold session start on these VMs, and the compiler's garbage left
// in the idle worker's heap. The host compiles them instead, once per Python minor, with the
// same distribution the workers run, as timestamp pycs: Python checks each against its
// source's mtime and size at import, so an edited module is compiled again in memory, never
// run stale. Best effort: when the directory cannot be written (a read-only install) the
// workers compile in memory as before, and the reason goes to the log.

export type GuestBytecodeResult =
  | { state: 'fresh' }
  | { state: 'compiled' }
  | { state: 'failed'; reason: string; stale: string[] }

// The .py files under dir (compileall's walk: every level, __pycache__ skipped).
function sources(dir: string): string[] {
  const out: string[] = []
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) {
      if (e.name !== '__pycache__') out.push(...sources(p))
    } else if (e.isFile() && e.name.endsWith('.py')) {
      out.push(p)
    }
  }
  return out
}

// Where CPython looks for a module's bytecode: __pycache__/<name>.cpython-3XX.pyc.
export function pycPath(source: string, minor: string): string {
  const name = basename(source, '.py')
  return join(dirname(source), '__pycache__', `${name}.cpython-${minor.replace('.', '')}.pyc`)
}

// Whether the pyc's header names this source as it is now: a timestamp pyc (flags 0) with
// the source's mtime in whole seconds and its size, as importlib validates it.
function fresh(source: string, minor: string): boolean {
  const pyc = pycPath(source, minor)
  let fd: number
  try {
    fd = openSync(pyc, 'r')
  } catch {
    return false
  }
  try {
    const head = Buffer.alloc(16)
    if (readSync(fd, head, 0, 16, 0) !== 16) return false
    const st = statSync(source)
    return (
      head.readUInt32LE(4) === 0 &&
      head.readUInt32LE(8) === Math.floor(st.mtimeMs / 1000) % 2 ** 32 &&
      head.readUInt32LE(12) === st.size % 2 ** 32
    )
  } finally {
    closeSync(fd)
  }
}

// The sources under dir whose bytecode for this minor is missing or out of date.
export function staleSources(dir: string, minor: string): string[] {
  return sources(dir).filter((s) => !fresh(s, minor))
}

// Compiles what is stale under dir with python (the distribution's executable), and says
// what it found. Never throws: a worker runs without these files, only slower.
export async function compileGuestBytecode(
  dir: string,
  python: { executable: string; minor: string },
): Promise<GuestBytecodeResult> {
  let stale: string[]
  try {
    stale = staleSources(dir, python.minor)
  } catch (err) {
    return { state: 'failed', reason: errorMessage(err), stale: [] }
  }
  if (stale.length === 0) return { state: 'fresh' }
  if (!existsSync(python.executable)) {
    return { state: 'failed', reason: `no interpreter at ${python.executable}`, stale }
  }
  // compileall trusts a pyc whose header has the source's mtime and never compares the size:
  // a module edited within the second its pyc was written would keep the old bytecode. A
  // stale one goes first, so compileall writes it again.
  for (const source of stale) rmSync(pycPath(source, python.minor), { force: true })
  const reason = await new Promise<string | undefined>((resolve) => {
    execFile(
      python.executable,
      // -I: the user's PYTHON* variables and user site-packages play no part. -S: no `site`
      // at all, so no .pth file of the distribution's site-packages runs here, on the host,
      // unconfined (one a session could have planted before its package was read-only to it).
      // The explicit invalidation mode keeps SOURCE_DATE_EPOCH from turning these into hash pycs.
      ['-I', '-S', '-m', 'compileall', '-q', '--invalidation-mode', 'timestamp', dir],
      { timeout: 60_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } },
      (err, stdout, stderr) =>
        resolve(err ? `${err.message.split('\n')[0]} ${stdout}${stderr}`.trim() : undefined),
    )
  })
  // compileall reports a file it could not compile (or write) only by its exit status: the
  // headers say what it managed.
  const left = staleSources(dir, python.minor)
  if (left.length === 0) return { state: 'compiled' }
  return { state: 'failed', reason: reason ?? 'compileall wrote no bytecode', stale: left }
}

const once = new Map<string, Promise<GuestBytecodeResult>>()

// compileGuestBytecode once per directory and interpreter in this process: every worker
// start awaits it, the first one pays for it. What it could not write is said once, in log.
export function guestBytecode(
  dir: string,
  python: { executable: string; minor: string },
  log: string,
): Promise<GuestBytecodeResult> {
  const key = `${dir}\0${python.executable}`
  let p = once.get(key)
  if (!p) {
    p = compileGuestBytecode(dir, python).then((r) => {
      if (r.state === 'failed') {
        appendLog(
          log,
          `guest bytecode for Python ${python.minor} not written under ${dir} (${r.stale.length} modules are compiled in every worker instead): ${r.reason}`,
        )
      }
      return r
    })
    once.set(key, p)
  }
  return p
}
