// Attack (eighth outsider pass; SECURITY.md Roots, "A project's extensions are loaded only once a person
// trusted their content": "Not trusted, or changed since (by anyone): nothing of the folder is
// evaluated" and the trust hash follows links; "every jail masks `<root>/.vis/extensions`"). When the
// person keeps the folder elsewhere and links it (`.vis/extensions -> ../tools/vis-ext`, a dotfiles
// layout the hash explicitly supports), the mask lands on the link's TARGET and the link itself stays an
// ordinary entry of the writable `.vis` directory. One session of the engine whose project this is
// (`vis run`/`vis chat` in the project, root = the project) unlinks the link, makes a real
// `.vis/extensions` with a csv.py in it, and calls an extension tool: the engine's trusted worker, which
// starts at that first call, puts `<project>/.vis/extensions` first on sys.path and the extension's
// `import csv` runs the sandbox's file on the host, unconfined. The registry hashed the folder once, at
// the engine's start, and never looks again. One block, one engine, no other process, no person.
//
// Reproduction: app/.vis/extensions -> ../tools/vis-ext holds probe.py (imports csv), trusted. An engine
// with project app, a session on app; one block: os.unlink('.vis/extensions'), os.makedirs it, write
// csv.py (writes a marker outside every root), `await probe_run()`. A fix: refuse changes to the `.vis`
// folder's entries in the jail (mask or bind `.vis` read-only, not only what `extensions` resolves to),
// and check the trust record again (path identity and hashes) before any trusted worker imports from it.
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { plantedModule, trustedLinkedCsvProbe, withProjectEngine } from './trusted-project-extension.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-ext-link-replaced-'))
after(() => rmSync(base, { recursive: true, force: true }))

test('a session cannot replace its own project’s linked extension folder and have the trusted worker import from it', async () => {
  const home = join(base, 'home')
  const project = join(base, 'app')
  trustedLinkedCsvProbe(home, project)
  const marker = join(base, 'ran-on-the-host')
  const planted = plantedModule(marker, 'sandbox csv')
  await withProjectEngine(home, project, async (e) => {
    const s = await e.createSession({ roots: [project] })
    const r = await e.runBlock(s.id, {
      code: [
        'import os',
        'try:',
        "    os.unlink('.vis/extensions')",
        "    os.makedirs('.vis/extensions')",
        `    open('.vis/extensions/csv.py', 'w').write(${JSON.stringify(planted)})`,
        "    print('replaced the link')",
        'except OSError as e:',
        "    print('refused:', e)",
        'print(await probe_run())',
      ].join('\n'),
    })
    assert.ok(
      !existsSync(marker),
      `a block replaced the linked .vis/extensions with a folder of its own and the engine's trusted worker ran its ` +
        `csv.py on the host, outside every jail (${JSON.stringify(r.block.stdout ?? r.block.error)})`,
    )
  })
})
