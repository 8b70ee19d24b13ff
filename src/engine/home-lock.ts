import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { VisError } from '../util/errors.js'
import { pidExists } from '../util/proc.js'

// One engine per vis home: on start an engine closes every block still marked running as
// abandoned, which is right only if no other live engine is running them. A lock file holding
// the owner's pid says so; one left by a killed process (its pid gone) is taken over.
export function lockHome(home: string): () => void {
  mkdirSync(home, { recursive: true })
  const path = join(home, 'engine.lock')
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx')
      writeSync(fd, `${process.pid}\n`)
      closeSync(fd)
      let released = false
      return () => {
        if (released) return
        released = true
        rmSync(path, { force: true })
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    const owner = Number.parseInt(readFileSync(path, 'utf8'), 10)
    if (Number.isInteger(owner) && owner > 0 && pidExists(owner)) {
      throw new VisError(
        'engine.home-in-use',
        `Another vis engine (pid ${owner}) is using ${home}; stop it, or point VIS_HOME elsewhere.`,
        { path: home, pid: owner },
      )
    }
    // Stale: its owner died without releasing it.
    rmSync(path, { force: true })
  }
  throw new VisError('engine.home-in-use', `Could not lock ${home}; another engine is starting there.`, {
    path: home,
  })
}
