// The allowed direction of test/attacks/index-parse-thread-module-in-root.test.ts's Ruby case: a grammar
// vis-runtime does not declare (tree-sitter-ruby, "added" by the application, README) is loaded when it
// lies beside vis-runtime in the application's node_modules (a dependency directory every jail binds
// read-only), even while a session's sandbox has planted another copy further up in its root. The
// grammar here is tree-sitter-python's real WASM under tree-sitter-ruby's name: a grammar the parser
// runtime loads, so index() answers with an outline instead of tool.no-grammar.
import assert from 'node:assert/strict'
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { hostFixture, installedPackage, needsBuiltPackage } from './installed-package.js'

const repo = join(import.meta.dirname, '..', '..')

test("an undeclared grammar installed beside vis-runtime is loaded by the index's parser thread", () => {
  needsBuiltPackage()
  const { root: R, home, pkg, run } = installedPackage('index-ruby-beside', 'npm', 'app')
  const beside = join(R, 'app', 'node_modules', 'tree-sitter-ruby')
  mkdirSync(beside, { recursive: true })
  writeFileSync(join(beside, 'package.json'), JSON.stringify({ name: 'tree-sitter-ruby', version: '0.23.1' }))
  copyFileSync(
    join(repo, 'node_modules', 'tree-sitter-python', 'tree-sitter-python.wasm'),
    join(beside, 'tree-sitter-ruby.wasm'),
  )
  const r = run(hostFixture('ruby-grammar-planted-host.mjs'), pkg, R, home)
  assert.equal(r.status, 0, r.stderr)
  const out = r.stdout.trim().replace(/\n/g, ' | ')
  assert.match(out, /plant: wrote/, out)
  assert.doesNotMatch(out, /tool\.no-grammar|tool\.index-failed|grammar-incompatible/, out)
  assert.match(
    out,
    /index: \{/,
    `index answered with an outline from the grammar beside the package (${out})`,
  )
})
