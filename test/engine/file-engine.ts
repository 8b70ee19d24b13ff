// One engine (no pool, no extensions) over a fresh vis home and root for all the tests of a file:
// started before them, closed after them with its home and root removed.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before } from 'node:test'
import { createEngine, type Engine } from '../../src/engine/index.js'

// `started` receives the engine once it is up (before the file's first test).
export function engineForFile(tag: string, started: (engine: Engine) => void): { root: string } {
  const home = mkdtempSync(join(tmpdir(), `vis-${tag}-home-`))
  const root = mkdtempSync(join(tmpdir(), `vis-${tag}-root-`))
  let engine: Engine | undefined
  before(async () => {
    engine = await createEngine({
      home,
      python: process.env.VIS_PYTHON_VERSION,
      pool: { size: 0 },
      extensions: false,
    })
    started(engine)
  })
  after(async () => {
    await engine?.close()
    rmSync(home, { recursive: true, force: true })
    rmSync(root, { recursive: true, force: true })
  })
  return { root }
}
