// Attack (eleventh outsider pass): src/util/optional-module.ts refuses an optional module (typescript for
// patch's syntax check, web-tree-sitter and the grammars for index) that resolves inside "any root a
// session of THIS process opened". The tenth pass's MCP launch fix already judges paths against every
// live jail of the user (`~/.vis/live-jails/`), since one vis process's sandbox can write what another
// vis process then loads; the optional-module check does not. Two vis processes of one user: A (here, a
// library host; in life a `vis serve`) has a session on R, the directory above an application R/app that
// installed vis-runtime (typescript, a development dependency, is not installed); B is another host
// process run from that same install (`vis run`/`vis mcp`/another server) whose own session works in W,
// outside R. A's sandbox writes R/node_modules/typescript, an ordinary folder of its root, while its jail
// is live; B patches W/a.ts, its syntax check resolves `typescript` through the ancestors of its package
// to R/node_modules/typescript, judges it against B's roots only, and imports it: the sandbox's code runs
// in B, unconfined, as the user (the marker lies outside every root).
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

test("a module a live session of another vis process planted in its root is not loaded by this process's host", async () => {
  needsBuiltPackage()
  const { root: R, home, pkg, marker, run } = installedPackage('other-process', 'npm', 'app')
  const W = mkdtempSync(join(tmpdir(), 'vis-attack-other-process-w-'))
  const homeA = mkdtempSync(join(tmpdir(), 'vis-attack-other-process-home-a-'))
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
        `B's syntax check imported R/node_modules/typescript, planted by a live session of process A, and ran it on the host: ${existsSync(marker) ? readFileSync(marker, 'utf8') : ''} (${out})`,
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
