// Attack (seventh outsider pass; SECURITY.md in scope: guest code writing outside its roots / the host
// running what a sandbox wrote; "trusted extensions ... unconfined by design, the model never runs code
// there"): project extensions, `<project>/.vis/extensions/*.py`, are loaded and run UNCONFINED by every
// engine started with that project (`vis run` and `vis chat` use the current directory:
// src/cli/agent/setup.ts `createEngine({ project: root })`; `vis ext`, `vis doctor --project`). A
// sandbox is kept from writing there only by the jail's extension masks, and those mask the extension
// directories of the engine's OWN project and home (ExtensionRegistry.maskFor → extensionDirPaths():
// the global dir and `this.project`). Every other root's `.vis/extensions` is an ordinary writable
// directory: a session of a `vis serve` started in another directory (its project is its own cwd),
// a library session (`createEngine()` has no project), or a `vis run` in a parent directory.
//
// So a block of a `vis serve` session (started in ~) on ~/projects/app writes
// ~/projects/app/.vis/extensions/x.py;
// the next time the person runs `vis run "…"` (or `vis chat`, `vis ext list`) in ~/projects/app, the
// host evaluates x.py as the user, outside every jail: a complete escape, one step later.
//
// Reproduction: engine A (a library engine: no project) runs a session on root R whose block
// writes R/.vis/extensions/planted.py (it creates a marker file outside every root when evaluated).
// Engine B (as `vis run` in R makes it: project R) starts and opens a session there. It fails on the
// current code because the block's write lands and engine B runs the planted code on the host (a fix:
// mask `.vis/extensions` inside every root, whatever the engine's project, or load project
// extensions only once a person has trusted that exact content).
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'
import { python, waitFor } from '../sessions/helpers.js'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

test('a sandbox cannot plant a project extension that a later engine runs on the host', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-projext-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-projext-root-'))
  const outside = mkdtempSync(join(tmpdir(), 'vis-attack-projext-outside-'))
  made.push(home, root, outside)
  process.env.VIS_HOME = home
  const marker = join(outside, 'ran-on-the-host')
  const planted = `open(${JSON.stringify(marker)}, 'w').write('unconfined')\n`

  // Engine A: an engine whose project is not the workspace, its session on the workspace.
  const a = await createEngine({ home, python, pool: { size: 0 } })
  try {
    const s = await a.createSession({ roots: [root] })
    const w = await a.runBlock(s.id, {
      code: [
        'import os',
        "os.makedirs('.vis/extensions', exist_ok=True)",
        `open('.vis/extensions/planted.py', 'w').write(${JSON.stringify(planted)})`,
        "print('planted')",
      ].join('\n'),
    })
    assert.equal(w.block.error, null, JSON.stringify(w.block.error))
  } finally {
    await a.close()
  }
  const landed = existsSync(join(root, '.vis', 'extensions', 'planted.py'))

  // Engine B: `vis run` in that workspace (project = the workspace).
  const b = await createEngine({ home, python, pool: { size: 0 }, project: root })
  try {
    const s = await b.createSession({ roots: [root] })
    await b.runBlock(s.id, { code: 'print(1)' })
    await waitFor(() => existsSync(marker), 3000, 'the planted extension to run').catch(() => {})
  } finally {
    await b.close()
  }
  assert.ok(
    !existsSync(marker),
    `a block of one session wrote ${landed ? 'root/.vis/extensions/planted.py (it landed)' : 'a project extension'}, ` +
      'and the next engine with that project evaluated it on the host, outside every jail (it wrote a file outside every root)',
  )
})
