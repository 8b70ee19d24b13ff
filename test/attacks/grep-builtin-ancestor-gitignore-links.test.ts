// ATTACK, the link variants of grep-builtin-ancestor-gitignore-fifo.test.ts: a directory above a
// session's root may be another session's root, whose sandbox plants the ignore files the
// builtin engine reads there (SECURITY.md "Roots"). A `.gitignore` linked to a host file would
// make that file's lines rules deciding what the victim's grep reports (and so tell about its
// contents); one linked to /dev/zero would make the host read without end. Ignore files above a
// root are read beneath their directory with no link followed (src/confinement/read-text.ts): a link
// counts as absent. The person's own regular ignore files there still count (the other
// direction).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdir, symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { toolJail } from '../../src/sessions/tool-jail.js'
import { grepTool } from '../../src/tools/fs/grep.js'
import { normalizePolicy } from '../../src/worker/worker-policy.js'
import { call, context, files, guardFor, tempDir } from '../tools/helpers.js'

// A repository (the other session's root) with the victim's root `app` below it.
async function repoWithApp() {
  const repo = await tempDir('vis-attack-gi-link-')
  execFileSync('git', ['init', '-q', repo])
  await files(repo, {
    'app/code.py': 'needle = 1\n',
    'app/notes.log': 'needle in a log\n',
  })
  return { repo, app: join(repo, 'app') }
}

const grepPaths = async (app: string) => {
  const r = await call(grepTool(guardFor([app]), 'builtin'), context([app]), 'needle')
  return r.hits.map((h: { path: string }) => h.path).sort()
}

const jails: { dispose(): Promise<void> }[] = []
after(async () => {
  for (const j of jails) await j.dispose()
})

// ripgrep in a confined session's tool jail, where the ignore files above the root are bound
// read-only (search.ts ignoreFilesAbove).
const rgPaths = async (app: string) => {
  const jail = toolJail({ sessionId: 'gi-link', policy: normalizePolicy({ roots: [app] }) })
  jails.push(jail)
  const r = await call(
    grepTool(guardFor([app]), 'ripgrep'),
    { ...context([app]), spawn: jail.spawn },
    'needle',
  )
  return r.hits.map((h: { path: string }) => h.path).sort()
}

test("an ancestor's regular .gitignore and .git/info/exclude still count", async () => {
  const { repo, app } = await repoWithApp()
  await files(repo, { '.gitignore': '*.log\n', '.git/info/exclude': 'code.py\n' })
  assert.deepEqual(await grepPaths(app), [])
  assert.deepEqual(await rgPaths(app), [])
})

test("an ancestor's .gitignore linked to a host file does not feed that file's lines in", async () => {
  const { repo, app } = await repoWithApp()
  // The host file whose lines would hide `code.py` and `*.log` from the victim's grep.
  const host = await tempDir('vis-attack-gi-host-')
  await files(host, { 'secret.txt': 'code.py\n*.log\n' })
  await symlink(join(host, 'secret.txt'), join(repo, '.gitignore'))
  assert.deepEqual(await grepPaths(app), ['code.py', 'notes.log'])
  // ripgrep's jail does not bind the link's target either.
  assert.deepEqual(await rgPaths(app), ['code.py', 'notes.log'])
})

test('a .git/info/exclude reached through a linked directory above the root is not read', async () => {
  const { repo, app } = await repoWithApp()
  const host = await tempDir('vis-attack-gi-host-')
  await files(host, { 'info/exclude': '*.log\n' })
  // .git/info itself swapped for a link to the host directory.
  execFileSync('rm', ['-rf', join(repo, '.git', 'info')])
  await symlink(join(host, 'info'), join(repo, '.git', 'info'))
  assert.deepEqual(await grepPaths(app), ['code.py', 'notes.log'])
  assert.deepEqual(await rgPaths(app), ['code.py', 'notes.log'])
})

test("an ancestor's .gitignore linked to /dev/zero is not read (the call returns)", async () => {
  const { repo, app } = await repoWithApp()
  await symlink('/dev/zero', join(repo, '.gitignore'))
  await mkdir(join(app, 'sub'))
  const started = Date.now()
  assert.deepEqual(await grepPaths(app), ['code.py', 'notes.log'])
  // Reading /dev/zero unbounded would not return at all; bounded but followed, it would take
  // seconds of reads per call.
  assert.ok(Date.now() - started < 5000, `grep took ${Date.now() - started} ms`)
})
