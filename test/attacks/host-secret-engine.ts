// The set-up several host-tool attacks share: an engine over a fresh vis home and root, and a
// host file (0600, outside every root) a block must never learn anything of.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before } from 'node:test'
import { createEngine, type Engine } from '../../src/engine/index.js'

export function hostSecretEngine(tag: string, secretText: string) {
  const home = mkdtempSync(join(tmpdir(), `vis-attack-${tag}-home-`))
  const root = mkdtempSync(join(tmpdir(), `vis-attack-${tag}-root-`))
  const outside = mkdtempSync(join(tmpdir(), `vis-attack-${tag}-secret-`))
  const it = { root, secret: join(outside, 'keys'), e: undefined as unknown as Engine }
  before(async () => {
    writeFileSync(it.secret, secretText)
    chmodSync(it.secret, 0o600)
    it.e = await createEngine({
      home,
      python: process.env.VIS_PYTHON_VERSION,
      pool: { size: 0 },
      extensions: false,
    })
  })
  after(async () => {
    await it.e.close()
    for (const d of [home, root, outside]) rmSync(d, { recursive: true, force: true })
  })
  return it
}
