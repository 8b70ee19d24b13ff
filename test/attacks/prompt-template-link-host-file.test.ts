// ATTACK (same rule as skills: a block must not plant a link that makes the host read a host
// file into the model's context): `/<name> args` runs the template `.vis/prompts/<name>.md` of
// the project (the workspace root, which the sandbox writes) with `existsSync` +
// `readFileSync` (src/agent/templates.ts `expandTemplate`), following symlinks, unbounded, on
// the event loop. A block replaces the project's `.vis/prompts/fix.md` with a link to any host
// file; the next time the person types `/fix ...` (vis chat, or an HTTP turn) the host file is
// the prompt sent to the model. (A FIFO there stops the host, as with AGENTS.md.)
//
// Reproduction: a block runs `os.symlink(<host file>, '.vis/prompts/fix.md')`; the person's
// turn '/fix the tests' sends the host file's marker to the model.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { harness } from '../agent/harness.js'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

test("a link planted as a project prompt template does not put a host file into the model's prompt", async () => {
  const hostDir = mkdtempSync(join(tmpdir(), 'vis-attack-template-secret-'))
  made.push(hostDir)
  const secretFile = join(hostDir, 'credentials')
  writeFileSync(secretFile, 'aws_secret_access_key = HOST-SECRET-5c2e\n')
  const h = await harness()
  const requests: string[] = []
  try {
    mkdirSync(join(h.root, '.vis', 'prompts'), { recursive: true })
    writeFileSync(join(h.root, '.vis', 'prompts', 'fix.md'), 'Fix $ARGUMENTS carefully.\n')
    const planted = await h.engine.runBlock(h.sessionId, {
      code: `import os\nos.unlink('.vis/prompts/fix.md')\nos.symlink(${JSON.stringify(secretFile)}, '.vis/prompts/fix.md')\nprint('planted')`,
    })
    assert.equal(planted.block.error, null, JSON.stringify(planted.block))
    h.double.script([], (req) => {
      requests.push(JSON.stringify(req.body))
      return { text: 'ok' }
    })
    const r = await h.agent.turn(h.sessionId, '/fix the tests').catch((e) => ({ status: 'error', error: e }))
    const leaked = requests.some((b) => b.includes('HOST-SECRET-5c2e'))
    assert.equal(leaked, false, `the host file reached the model as the /fix template (${r.status})`)
    // Refused for the right reason: the link is named, never followed.
    assert.equal(r.status, 'error')
    const err = (r as { error?: { code?: string; message?: string } }).error
    assert.equal(err?.code, 'agent.template-unreadable', JSON.stringify(err))
    assert.match(err?.message ?? '', /symbolic link/)
  } finally {
    await h.close()
  }
})
