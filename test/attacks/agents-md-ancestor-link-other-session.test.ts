// ATTACK (SECURITY.md "Skills and agent definitions": "Project instructions ... inside a root are
// read ... beneath the root's directory fd with no symlink"; src/agent/read-text.ts: "elsewhere
// (the vis home, the workspace's host ancestors) a person's own link is followed").
// The fix for agents-md-link-host-file.test.ts makes only files inside THIS session's roots
// strict. Every AGENTS.md/CLAUDE.md of the workspace's ancestors is still opened following
// symlinks, as if a person had put it there. But an ancestor is often another session's root
// (SECURITY.md "Roots": "a root's parent may be another sandbox's to write (a workspace and its
// subproject, two clients of one server)"): `vis serve` works on ~/projects while `vis run`
// works in ~/projects/app. That other sandbox plants ~/projects/AGENTS.md -> any host file (a
// symlink needs no access to its target), and every turn of the subproject's session sends the
// host file to the model as "project instructions"; the sandbox also writes the subproject
// (it is inside its root), so a prompt injection there can have the model write it back out.
//
// Reproduction: session A (root P) runs `os.symlink('<host dir>/id_rsa', 'AGENTS.md')`; session
// B (root P/app) runs a turn: its model request carries the host file's content.
// Expected: an ancestor file reached through a link planted in a directory that is (inside)
// another session's root is not followed (or ancestors are read without following links).
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { harness } from '../agent/harness.js'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

test("a link another session plants as the workspace ancestor's AGENTS.md does not put a host file into the prompt", async () => {
  const hostDir = mkdtempSync(join(tmpdir(), 'vis-attack-ancestor-secret-'))
  const parent = mkdtempSync(join(tmpdir(), 'vis-attack-ancestor-root-'))
  made.push(hostDir, parent)
  const secretFile = join(hostDir, 'id_rsa')
  writeFileSync(secretFile, '-----BEGIN OPENSSH PRIVATE KEY----- HOST-SECRET-4be2\n')
  const app = join(parent, 'app')
  mkdirSync(app)
  const h = await harness({ root: app })
  try {
    // The other sandbox: a session whose root is the subproject's parent.
    const other = await h.engine.createSession({ roots: [parent] })
    const planted = await h.engine.runBlock(other.id, {
      code: `import os\nos.symlink(${JSON.stringify(secretFile)}, 'AGENTS.md')\nprint(os.readlink('AGENTS.md'))`,
    })
    assert.equal(planted.block.error, null, JSON.stringify(planted.block))
    const requests: string[] = []
    h.double.script([], (req) => {
      requests.push(JSON.stringify(req.body))
      return { text: 'done' }
    })
    const r = await h.agent.turn(h.sessionId, 'SUBPROJECT-TASK')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.ok(requests.length > 0, 'the turn made no model request')
    assert.equal(
      requests.some((b) => b.includes('HOST-SECRET-4be2')),
      false,
      "a host file outside every root reached the turn's prompt through a link another sandbox planted as the ancestor's AGENTS.md",
    )
  } finally {
    await h.close()
  }
})

// The same link aimed at /proc/self/environ: opened by the host, it is the HOST process's
// environment as it started (its API keys, VIS_TOKEN), a regular file to fstat, read whole into
// the prompt. The test looks for the host's PATH entry there.
test("a link another session plants as the ancestor's AGENTS.md does not put the host's environment into the prompt", async () => {
  const parent = mkdtempSync(join(tmpdir(), 'vis-attack-ancestor-env-'))
  made.push(parent)
  const app = join(parent, 'app')
  mkdirSync(app)
  const h = await harness({ root: app })
  try {
    const other = await h.engine.createSession({ roots: [parent] })
    const planted = await h.engine.runBlock(other.id, {
      code: `import os\nos.symlink('/proc/self/environ', 'AGENTS.md')`,
    })
    assert.equal(planted.block.error, null, JSON.stringify(planted.block))
    const requests: string[] = []
    h.double.script([], (req) => {
      requests.push(JSON.stringify(req.body))
      return { text: 'done' }
    })
    const r = await h.agent.turn(h.sessionId, 'SUBPROJECT-TASK')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(
      requests.some(
        (b) => b.includes(`PATH=${process.env.PATH}\\u0000`) || b.includes(`\\u0000PATH=${process.env.PATH}`),
      ),
      false,
      "the host process's environment reached the turn's prompt through a link another sandbox planted",
    )
  } finally {
    await h.close()
  }
})

// The allowed direction: the vis home is no sandbox's to write, so a person's own link there
// (AGENTS.md kept in a dotfiles folder) is still followed into the prompt.
test("a person's own AGENTS.md link in the vis home is followed", async () => {
  const dotfiles = mkdtempSync(join(tmpdir(), 'vis-attack-ancestor-dotfiles-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-ancestor-plain-'))
  made.push(dotfiles, root)
  writeFileSync(join(dotfiles, 'AGENTS.md'), 'PERSONAL-RULES-77c1\n')
  const h = await harness({ root })
  try {
    symlinkSync(join(dotfiles, 'AGENTS.md'), join(h.home, 'AGENTS.md'))
    const requests: string[] = []
    h.double.script([], (req) => {
      requests.push(JSON.stringify(req.body))
      return { text: 'done' }
    })
    const r = await h.agent.turn(h.sessionId, 'TASK')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.ok(
      requests.some((b) => b.includes('PERSONAL-RULES-77c1')),
      "the vis home's linked AGENTS.md reached the prompt",
    )
  } finally {
    await h.close()
  }
})
