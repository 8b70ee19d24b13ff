import { createHash, randomBytes } from 'node:crypto'
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { homedir, userInfo } from 'node:os'
import { isAbsolute, join } from 'node:path'
import { realish } from './real-path.js'

// Every vis home this user has opened, wherever it lies: one vis process's sandbox must never
// see another's home (its database, its mcp.json and extensions that process runs unconfined,
// its owner socket), and a process knows only its own home by itself. Each process that opens
// a home records it here; the root guard and every jail read the whole list (root-guard.ts).
//
// The registry lives in the user's default home, ~/.vis/homes/: that folder is protected by
// every vis process whatever its VIS_HOME, so no sandbox can read or edit the list. It outlives
// the processes on purpose: a home's files are what a sandbox must not reach, whether or not its
// owner runs now. An entry is dropped once its home is gone.

// The user's default home, always protected (it holds the registry).
export const userDefaultHome = () => join(homedir(), '.vis')
// The default home under the user's home from the password database, when HOME names another place
// (a `vis serve` run as a service or in a container with its own HOME): the folder the user's other
// vis processes, with the usual HOME, keep their registries in. Undefined when it is the same
// folder or there is no password database entry.
export function usualDefaultHome(): string | undefined {
  let usual: string
  try {
    usual = join(userInfo().homedir, '.vis')
  } catch {
    return undefined
  }
  return usual === userDefaultHome() ? undefined : usual
}
export const registryDir = () => join(userDefaultHome(), 'homes')

const entryName = (real: string) => createHash('sha256').update(real).digest('hex').slice(0, 32)

// Records a home. Best effort: a read-only ~ (a locked-down service user) leaves the home known
// only to the processes that name it, as before.
export function registerHome(home: string): void {
  const real = realish(home)
  if (real === realish(userDefaultHome())) return
  const dir = registryDir()
  const file = join(dir, entryName(real))
  try {
    if (existsSync(file) && readFileSync(file, 'utf8') === real) return
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const tmp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`
    writeFileSync(tmp, real, { mode: 0o600 })
    renameSync(tmp, file)
  } catch {
    // as above
  }
}

// A directory's mtime is set from the kernel's coarse clock (a tick of up to 10 ms), so two
// changes within one tick can leave it equal. The cache below trusts an unchanged mtime only when
// that mtime was at least this old at the read: any later change then carries a later mtime.
const SETTLED_NS = 100_000_000n

// What this process last read of the registry: each entry's home by file name (a name is the
// hash of its home, so an entry's content never changes), and the directory's state then.
let cache:
  | { dir: string; stamp: string; settled: boolean; byName: Map<string, string>; list: readonly string[] }
  | undefined

// The registered homes (real paths). Read in full once per process (entries whose home is gone
// are removed then); after that only when the directory changed, and then only the new entries.
// Every jail and root check asks, so an unchanged registry costs one stat, whatever its size
// (test machines collect thousands of entries). A home that went away since this process's
// first read may still be listed: callers looking for homes INSIDE a directory check that the
// home is still there (protected-homes.ts homesInside); one a root lies inside exists by
// definition. Unchanged, the same (frozen) list is returned, which callers may index once.
export function registeredHomes(): readonly string[] {
  const dir = registryDir()
  const before = BigInt(Date.now()) * 1_000_000n
  let st: { dev: bigint; ino: bigint; mtimeNs: bigint; ctimeNs: bigint }
  try {
    st = statSync(dir, { bigint: true })
  } catch {
    cache = undefined
    return []
  }
  const stamp = `${st.dev}:${st.ino}:${st.mtimeNs}:${st.ctimeNs}`
  if (cache?.dir === dir && cache.settled && cache.stamp === stamp) return cache.list
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    cache = undefined
    return []
  }
  const known = cache?.dir === dir ? cache.byName : undefined
  const byName = new Map<string, string>()
  let added = 0
  for (const name of names) {
    if (!/^[0-9a-f]{32}$/.test(name)) continue
    const had = known?.get(name)
    if (had !== undefined) {
      byName.set(name, had)
      continue
    }
    const file = join(dir, name)
    let home: string
    try {
      home = readFileSync(file, 'utf8')
    } catch {
      continue
    }
    if (!isAbsolute(home) || home.includes('\0')) continue
    if (existsSync(home)) {
      byName.set(name, home)
      added++
    } else rmSync(file, { force: true })
  }
  // The same entries as before (the directory was touched, or is too fresh to trust): the
  // same list, so what callers built from it stays valid.
  const same = added === 0 && known !== undefined && known.size === byName.size
  const list = same && cache ? cache.list : Object.freeze([...byName.values()])
  cache = { dir, stamp, settled: before - st.mtimeNs >= SETTLED_NS, byName, list }
  return list
}
