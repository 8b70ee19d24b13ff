// Attack (eleventh outsider pass): the eighth pass's fix for modules the host imports only when installed
// (src/util/optional-module.ts) refuses a copy that resolves inside a session's root, judged against the
// roots noted in host-programs.ts's module-level `sessionRoots`. But index() parses in a worker_threads
// thread (src/tools/outline/parse-pool.ts -> parse-thread.ts), and a worker thread has its OWN copy of every
// module: root-guard.ts notes roots in the main thread only, so in the parser thread the set is always
// empty and `importOptional('web-tree-sitter')` / `grammarFile()` refuse nothing. The parser runtime and
// the grammars are optional dependencies (`npm install --omit=optional`, or a failed optional install,
// leaves them out; tree-sitter-ruby is never installed), so Node's lookup goes on to every ancestor's
// node_modules. A session rooted at R, with the application at R/app, writes R/node_modules/web-tree-sitter,
// calls index() on a .py file, and the host's parser thread imports that JavaScript, unconfined, as the
// user (the marker is written outside every root). The same set-up with typescript (patch's syntax check,
// main thread) is refused: test/attacks/ancestor-optional-module-in-root.test.ts.
import assert from 'node:assert/strict'
import { existsSync, readFileSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import manifest from '../../package.json' with { type: 'json' }
import { hostFixture, installedPackage, needsBuiltPackage } from './installed-package.js'

const host = hostFixture('tree-sitter-planted-host.mjs')

test("a parser runtime planted in a root's ancestor node_modules is not imported by the index's parser thread", async () => {
  needsBuiltPackage()
  // npm's flat layout in R/app, installed without its optional dependencies (web-tree-sitter, grammars).
  const { root: R, home, pkg, marker, run } = installedPackage('index-thread', 'npm', 'app')
  for (const name of Object.keys(manifest.optionalDependencies)) {
    const link = join(R, 'app', 'node_modules', name)
    if (existsSync(link)) unlinkSync(link) // the link only, never the checkout's copy it points to
  }
  const r = run(host, pkg, R, home, marker)
  assert.equal(r.status, 0, r.stderr)
  const out = r.stdout.trim().replace(/\n/g, ' | ')
  assert.match(out, /plant: wrote/, 'the block could write its own root (the allowed direction)')
  assert.ok(
    !existsSync(marker),
    `the index's parser thread imported R/node_modules/web-tree-sitter, planted by a session on R, and ran it on the host: ${existsSync(marker) ? readFileSync(marker, 'utf8') : ''} (${out})`,
  )
  assert.match(
    out,
    /tool\.no-grammar|inside a session's root/,
    `index says the runtime is not usable (${out})`,
  )
})

// The same hole with a default install (web-tree-sitter and the grammars vis-runtime names installed): a
// grammar vis-runtime never installs (tree-sitter-ruby) is found in R/node_modules, planted by the session,
// and the host's parser runtime takes the sandbox's WASM as the Ruby grammar for this session and every
// other session of the host ("A grammar inside a session's root counts as absent", grammars.ts): index()
// answers with the planted module's load error (the host compiled it) instead of tool.no-grammar.
test("a grammar planted in a root's ancestor node_modules is not loaded by the index's parser thread", () => {
  needsBuiltPackage()
  const { root: R, home, pkg, run } = installedPackage('index-ruby', 'npm', 'app')
  const r = run(hostFixture('ruby-grammar-planted-host.mjs'), pkg, R, home)
  assert.equal(r.status, 0, r.stderr)
  const out = r.stdout.trim().replace(/\n/g, ' | ')
  assert.match(out, /plant: wrote/, out)
  assert.match(
    out,
    /index: tool\.no-grammar/,
    `the index's parser thread loaded R/node_modules/tree-sitter-ruby, planted by a session on R, as the Ruby grammar (${out})`,
  )
})
