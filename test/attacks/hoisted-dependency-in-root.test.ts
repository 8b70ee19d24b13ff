// Attack (seventh outsider pass; SECURITY.md Roots, "A root that contains the vis-runtime package (its
// checkout, or a project that ran `npm install vis-runtime`): the host runs from the package (dist/,
// its node_modules, vis-guest/, cpython-dist/ ...), so a block must not change it"): when vis-runtime is
// installed as a DEPENDENCY, npm hoists its own dependencies (better-sqlite3, hono, zod, openai, pg,
// @modelcontextprotocol/sdk, ...) to the PROJECT's node_modules, beside the package, not inside it.
// packageMounts() (src/confinement/mount-sources.ts) binds read-only only the package directory itself
// and the host tools' tool.read-only-path covers only that, so every hoisted dependency the host loads is
// an ordinary writable file of a root that is the project: README's own quick start
// (`npm install vis-runtime`, `createSession({ roots: [process.cwd()] })`, `vis run` in the project).
//
// A block prepends a line to node_modules/better-sqlite3/lib/index.js with a plain open() (the jail lets
// it: the root is writable there); the next host process from that install (`vis serve`, `vis run`, the
// application itself) requires it, unconfined, at start. A complete escape, one restart later.
//
// Reproduction: the test lays out P/node_modules/vis-runtime (this checkout's built files) with its
// dependencies hoisted to P/node_modules (better-sqlite3 copied, the rest linked), then runs a host
// process from that install whose session on P writes the dependency, then a second host process. It
// fails on the current code because the write lands and the second process runs the planted line
// (a fix: bind read-only, and refuse in the host tools, every directory the host process loads code
// from (the resolved paths of its dependencies), not only the package's own directory).
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { hostFixture, installedPackage, needsBuiltPackage } from './installed-package.js'

const host = hostFixture('hoisted-dependency-host.mjs')

test('a block cannot rewrite a dependency npm hoisted beside the package the host runs', async () => {
  needsBuiltPackage()
  // npm's layout: the package's dependencies beside it. The one attacked is a real copy.
  const { root: project, home, marker, run: runHost } = installedPackage('hoisted', 'npm-hoisted')
  const run = (phase: string) => runHost(host, project, home, phase, marker)
  const planted = run('plant')
  assert.equal(planted.status, 0, planted.stderr)
  // Refused for its reason in both places: the jail shows the directory read-only, and the host
  // file tool names the rule.
  assert.match(planted.stdout, /open: \[Errno 30\] Read-only file system/, planted.stdout)
  assert.match(planted.stdout, /write refused: tool\.read-only-path/, planted.stdout)
  // Nor moved aside whole, for a fresh one to be planted where the host loads from.
  assert.match(planted.stdout, /move refused: tool\.read-only-path/, planted.stdout)
  assert.match(planted.stdout, /dependency root refused: policy\.root-in-runtime/, planted.stdout)
  // The project's own files stay the session's to write, in the jail and through the host tool.
  assert.equal(readFileSync(join(project, 'own.txt'), 'utf8'), 'mine')
  assert.equal(readFileSync(join(project, 'own-tool.txt'), 'utf8'), 'mine too')
  assert.ok(!existsSync(marker), 'nothing ran on the host yet')
  const next = run('restart')
  assert.ok(
    !existsSync(marker),
    `a block of a session on the project rewrote node_modules/better-sqlite3 (${planted.stdout.trim().replace(/\n/g, ' | ')}), ` +
      `and the next host process from that install ran it unconfined (exit ${next.status})`,
  )
})
