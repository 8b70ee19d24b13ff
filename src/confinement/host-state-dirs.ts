import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { realish } from '../util/real-path.js'

// The host keeps files its jails depend on in its temporary directory: the tool jails' shared
// PYTHONUSERBASE, each egress proxy's socket, the jails' hosts and git config files. A root
// holding that directory would let one session rewrite or connect to what other sessions' jails
// use, so the root guard refuses it (root-guard.ts). Every such folder is made here, so the
// guard knows each place even when TMPDIR changed after a folder was made.

const madeIn = new Set<string>()

// A fresh private folder (mkdtemp: 0700, a name no one can guess) in the host's temp directory.
export function makeHostStateDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  madeIn.add(realish(dirname(dir)))
  return dir
}

// The real paths of the temporary directories the host keeps such state in: the one it would
// use now and every one it has used.
export function hostStateParents(): string[] {
  return [...new Set([realish(tmpdir()), ...madeIn])]
}
