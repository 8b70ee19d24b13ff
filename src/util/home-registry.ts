import { createHash, randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
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

// The registered homes that still exist (real paths). Entries whose home is gone are removed.
export function registeredHomes(): string[] {
  const dir = registryDir()
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return []
  }
  const out: string[] = []
  for (const name of names) {
    if (!/^[0-9a-f]{32}$/.test(name)) continue
    const file = join(dir, name)
    let home: string
    try {
      home = readFileSync(file, 'utf8')
    } catch {
      continue
    }
    if (!isAbsolute(home) || home.includes('\0')) continue
    if (existsSync(home)) out.push(home)
    else rmSync(file, { force: true })
  }
  return out
}
