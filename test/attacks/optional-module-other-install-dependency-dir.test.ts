// Attack (thirteenth outsider pass; surface: the optional-module rule, src/util/optional-module.ts, as the
// twelfth pass left it: "judged against every writable place of every live vis process", except that a file
// in the package's dependency directories is exempt, "the places every jail binds read-only wherever they
// lie"). Every jail of THIS install binds them read-only; a jail of another vis-runtime install does not
// (a global `vis serve`/`vis mcp`, installed with `npm install -g` as the README says, beside a project's
// library install: each binds its own package and dependency directories, not the other's). So with the
// library installed at R/node_modules/vis-runtime (R/node_modules is its dependency directory) and a session
// of another install live on R, that sandbox writes R/node_modules/typescript (a development dependency, not
// installed); the library's next patch of a .ts file resolves `typescript` to it, finds it in a live jail's
// root, exempts it as a dependency directory, and imports it: the block's code runs in the library's host
// process, unconfined.
//
// Reproduction: vis-runtime installed at R/node_modules/vis-runtime (npm layout); process A (this checkout,
// another install) has a session on R whose block writes R/node_modules/typescript; host B, run from the
// installed package with its own session on W (outside R), patches W/a.ts. Expected: B does not load the
// planted typescript (patch says its syntax check was skipped); the marker is never written.
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createRuntime } from '../../src/sessions/create-runtime.js'
import { python } from '../sessions/helpers.js'
import { hostFixture, installedPackage, needsBuiltPackage } from './installed-package.js'

const host = hostFixture('patch-ts-host.mjs')
const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

test("a module another install's live session planted in this install's dependency directory is not loaded", async () => {
  needsBuiltPackage()
  const { root: R, home, pkg, marker, run } = installedPackage('other-install-deps', 'npm')
  const W = mkdtempSync(join(tmpdir(), 'vis-attack-other-install-w-'))
  const homeA = mkdtempSync(join(tmpdir(), 'vis-attack-other-install-home-a-'))
  made.push(W, homeA)
  const rt = await createRuntime({ home: homeA, python, pool: { size: 0 } })
  try {
    const a = await rt.createSession({ roots: [R] })
    try {
      const js = `require('fs').writeFileSync(${JSON.stringify(marker)}, 'unconfined: ' + process.pid); module.exports = {}\n`
      const planted = await a.runBlock(
        [
          'import json, os',
          "d = 'node_modules/typescript'",
          'os.makedirs(d, exist_ok=True)',
          "open(d + '/package.json', 'w').write(json.dumps({'name': 'typescript', 'version': '5.9.9', 'main': 'index.js'}))",
          `open(d + '/index.js', 'w').write(${JSON.stringify(js)})`,
          "print('planted')",
        ].join('\n'),
        { timeoutMs: 60_000 },
      )
      assert.match(planted.stdout ?? '', /planted/, JSON.stringify(planted))
      // A's jail is live (its worker holds R) while B runs.
      const r = run(host, pkg, W, home)
      assert.equal(r.status, 0, r.stderr)
      const out = r.stdout.trim().replace(/\n/g, ' | ')
      assert.ok(
        !existsSync(marker),
        `B's syntax check imported R/node_modules/typescript (B's own dependency directory, written by a live ` +
          `session of another install) and ran it on the host: ` +
          `${existsSync(marker) ? readFileSync(marker, 'utf8') : ''} (${out})`,
      )
      assert.match(
        out,
        /patch: .*let x = 2|"ok"|applied/,
        `patch still applies without the syntax check (${out})`,
      )
    } finally {
      await a.dispose()
    }
  } finally {
    await rt.close()
  }
})
