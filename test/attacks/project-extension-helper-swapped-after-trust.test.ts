// Attack (eighth outsider pass; SECURITY.md Roots, "A project's extensions are loaded only once a person
// trusted their content": "Not trusted, or changed since (by anyone): nothing of the folder is
// evaluated"; "Defence in depth: every jail masks `<root>/.vis/extensions` where it exists"; README
// `vis ext trust`: "any later change (a session working there may have made it) stops it"). Two gaps
// meet:
// - the mask covers `.vis/extensions` at each ROOT (and the engine's own project): a project nested
//   below another engine's root (a `vis serve` or library session on ~/work, a `vis chat` in
//   ~/work/app) is an ordinary writable folder in that session's jail (only the host file tools
//   refuse `.vis`; a plain open() in the block does not ask them);
// - the content is hashed once, when the engine's registry loads. A session's trusted extension
//   worker starts later (at the first extension call) and imports the extension's helper modules from
//   the folder on disk, unconfined, with no second look at the trust record.
// So a block of engine A rewrites W/app/.vis/extensions/helper.py after engine B (project W/app, e.g.
// `vis chat` running there) trusted and loaded the folder; B's next extension call runs the planted
// helper on the host as the user. The "window of one load" SECURITY.md accepts is here the whole life of
// engine B, and the sandbox needs no timing. No helper is even needed: the folder is sys.path[0] of the
// trusted worker, so a NEW file there named after a stdlib module the extension imports (csv.py beside
// a one-file extension doing `import csv`; checked by hand) runs the same way, and adding a file leaves
// every trusted file's hash as it was.
//
// Reproduction: W/app/.vis/extensions holds probe.py (imports helper) and helper.py, trusted. Engine B
// (project W/app) loads them. Engine A (no project) runs a session on W whose block rewrites helper.py to
// write a marker outside every root. Then a session of B calls probe_run(): the marker appears and the
// tool answers with the planted value. A fix: re-check the trust record (the folder's hashes) before
// every trusted worker imports from the folder, or realise helpers from content the host hashed, and
// mask every `.vis/extensions` below a root, not only the root's own.
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import {
  blockInOtherEngine,
  callProbe,
  plantedModule,
  probeExtension,
  trustedLinkedCsvProbe,
  trustedProject,
  withProjectEngine,
} from './trusted-project-extension.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-ext-helper-swap-'))
after(() => rmSync(base, { recursive: true, force: true }))

test('a helper of a trusted project extension cannot be rewritten by another engine’s session and then run', async () => {
  const home = join(base, 'home')
  const work = join(base, 'work')
  const project = join(work, 'app')
  trustedProject(home, project, {
    'probe.py': probeExtension('helper', 'helper.VALUE'),
    'helper.py': 'VALUE = "trusted helper"\n',
  })
  const marker = join(base, 'ran-on-the-host')

  // Engine B: `vis chat` in W/app (project W/app); its registry hashes and loads the folder now.
  await withProjectEngine(home, project, async (b) => {
    // Engine A: another host process's session on the workspace above the project.
    const planted = plantedModule(marker, 'sandbox helper')
    const w = await blockInOtherEngine(
      home,
      [work],
      `open('app/.vis/extensions/helper.py', 'w').write(${JSON.stringify(planted)})\nprint('planted')`,
    )
    assert.equal(w.block.error, null, JSON.stringify(w.block.error))
    const r = await callProbe(b, project)
    assert.ok(
      !existsSync(marker),
      `a session of another engine rewrote app/.vis/extensions/helper.py after engine B trusted the folder; B's ` +
        `extension call then ran it on the host, outside every jail (it wrote a file outside every root; the ` +
        `tool answered ${JSON.stringify(r.block.stdout ?? r.block.error)})`,
    )
  })
})

// The same with the project itself as the other engine's root (the seventh pass's own case) when the
// person keeps the folder elsewhere in the project and links it (`.vis/extensions -> ../tools/vis-ext`,
// which trust hashing follows): the mask is made only "where it exists as a real folder", so the other
// engine's jail leaves the link's target writable, and a NEW csv.py there (no trusted file touched)
// shadows the stdlib module the trusted one-file extension imports, in engine B's trusted worker.
test('a linked trusted extension folder is not left writable to another engine’s session on the project', async () => {
  const home = join(base, 'home2')
  const project = join(base, 'app2')
  trustedLinkedCsvProbe(home, project)
  const marker = join(base, 'ran-on-the-host-2')
  await withProjectEngine(home, project, async (b) => {
    const planted = plantedModule(marker, 'sandbox csv')
    await blockInOtherEngine(
      home,
      [project],
      `try:\n    open('tools/vis-ext/csv.py', 'w').write(${JSON.stringify(planted)})\nexcept OSError as e:\n    print(e)`,
    )
    const r = await callProbe(b, project)
    assert.ok(
      !existsSync(marker),
      `a session of another engine on the project wrote tools/vis-ext/csv.py (the target of .vis/extensions); B's ` +
        `extension call ran it on the host (the tool answered ${JSON.stringify(r.block.stdout ?? r.block.error)})`,
    )
  })
})
