import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, isAbsolute, join } from 'node:path'
import { VisError } from './errors.js'
import { realish } from './real-path.js'
import {
  liveJailsDir,
  liveJailsDirs,
  livenessJudge,
  processKey,
  sweepDeadProcesses,
  writeProcessRecord,
} from './vis-processes.js'
import { writableRootHolding } from './writable-roots.js'

// The host keeps files its jails depend on in its temporary directory: the tool jails' shared
// PYTHONUSERBASE, each egress proxy's socket, the jails' hosts and git config files. A root
// holding that directory would let one session rewrite or connect to what other sessions' jails
// use, so the root guard refuses it (root-guard.ts). Every such folder is made here, so the
// guard knows each place even when TMPDIR changed after a folder was made.
//
// Other vis processes of the user (another TMPDIR: a `vis serve` under systemd, a shell's `vis run`)
// keep theirs elsewhere, and a root of this process holding them would reach into their jails just
// the same. So each process records its places in <pid>-<starttime>.state.json beside its FIFO
// (util/vis-processes.ts), and the guard refuses the places of every live one.

const madeIn = new Set<string>()
let recorded = ''

// A fresh private folder (mkdtemp: 0700, a name no one can guess) in the host's temp directory:
// for its jails' files, and for work whose output the host installs or runs (wheels and Debian
// packages being staged, a bundle's npm project; twelfth outsider pass). Refused while the temp directory lies in a root a live session may write (one of another vis
// process that started before this one chose that TMPDIR): that sandbox could rewrite what this
// host's jails use, as the root guard's refusal prevents in the other order.
export function makeHostStateDir(prefix: string): string {
  const tmp = tmpdir()
  const root = writableRootHolding(tmp)
  if (root !== undefined) {
    throw new VisError(
      'confine.tmpdir-in-root',
      `The host's temporary directory ${tmp} lies inside ${root}, a root of a session running now, which could ` +
        "rewrite what this host keeps or installs from there (its jails' Python site, hosts file and network socket; " +
        'wheels and packages being staged). Run vis with ' +
        'TMPDIR set to a directory outside every session root, or stop that session.',
      { op: 'host-state-dir', path: tmp, root },
    )
  }
  const dir = mkdtempSync(join(tmp, prefix))
  madeIn.add(realish(dirname(dir)))
  record()
  return dir
}

// The real paths of the temporary directories the host keeps such state in: the one it would
// use now and every one it has used.
export function hostStateParents(): string[] {
  return [...new Set([realish(tmpdir()), ...madeIn])]
}

// Rewrites this process's record when it has a place the record lacks. Best effort, like the live
// jails' entries: a read-only ~ leaves this process's places known only to itself.
function record(): void {
  const parents = hostStateParents()
  const text = JSON.stringify({ pid: process.pid, parents })
  if (text === recorded) return
  if (writeProcessRecord(`${processKey()}.state.json`, text)) recorded = text
}

const RECORD = /^(\d+-\d+)\.state\.json$/

// The places of every other live vis process of the user (and of any whose liveness cannot be
// told), each with its pid; dead processes' records are removed on the way.
export function otherHostStateParents(): { pid: number; parents: string[] }[] {
  const self = processKey()
  const out: { pid: number; parents: string[] }[] = []
  // Every folder of liveJailsDirs (a process with HOME elsewhere records in the usual one too);
  // a process recorded in two is counted once; only this process's own folder is swept.
  const seen = new Set<string>()
  for (const [i, dir] of liveJailsDirs().entries()) {
    let names: string[]
    try {
      names = readdirSync(dir)
    } catch {
      continue
    }
    const judge = livenessJudge(dir)
    for (const name of names) {
      const k = RECORD.exec(name)?.[1]
      if (k === undefined || k === self || seen.has(k) || judge(k) === 'dead') continue
      try {
        const raw = JSON.parse(readFileSync(join(dir, name), 'utf8')) as {
          pid?: unknown
          parents?: unknown
        }
        const parents = Array.isArray(raw.parents)
          ? raw.parents.filter((p): p is string => typeof p === 'string' && isAbsolute(p))
          : []
        seen.add(k)
        out.push({ pid: typeof raw.pid === 'number' ? raw.pid : Number(k.split('-')[0]), parents })
      } catch {
        // removed since the listing (that process ended), or half-written by hand: nothing to hold
      }
    }
    if (i === 0 && dir === liveJailsDir()) sweepDeadProcesses(names, judge)
  }
  return out
}
