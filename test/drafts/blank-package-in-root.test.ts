// A blank draft of a root that holds the vis-runtime package itself (`npm install vis-runtime` in a
// project rooted at the project, as README's first example does). The jail binds the package read-only
// over the root; in a blank draft the root's path shows an empty view, so the draft's mount shows the
// package (and its dependencies) there from the real root: the worker starts, the package stays
// read-only, and the diff holds only what the draft wrote.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { installedPackage, needsBuiltPackage } from '../attacks/installed-package.js'

const fixture = new URL('./fixtures/blank-draft-host.mjs', import.meta.url).pathname

test('a blank draft of a root holding the installed package starts, keeps the package read-only and diffs only its own files', () => {
  needsBuiltPackage()
  const inst = installedPackage('blank-draft', 'npm')
  const out = inst.run(fixture, inst.pkg, inst.root, inst.home)
  assert.equal(out.status, 0, out.stderr)
  const line = out.stdout.trim().split('\n').at(-1) ?? ''
  const r = JSON.parse(line)
  assert.equal(r.thrown, undefined, `the draft's block could not run: ${JSON.stringify(r.thrown)}`)
  assert.equal(r.error, null, JSON.stringify(r.error))
  // The blank view: only the package's folder (bound from the real root), nothing else of the root.
  assert.match(r.stdout, /view: \["node_modules"\]/)
  assert.match(r.stdout, /package: refused 30/) // EROFS
  assert.match(r.stdout, /cat: True/)
  assert.match(r.diff.diff ?? r.diff, /made-in-draft\.txt/)
  assert.doesNotMatch(JSON.stringify(r.diff), /vis-runtime/)
})
