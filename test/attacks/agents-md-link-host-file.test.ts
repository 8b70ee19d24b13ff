// ATTACK (issue 31 §2's rule, "a block cannot plant a link that makes the host read a host
// file into the model's context", applied to project instructions): at every turn the host
// reads each root's AGENTS.md (or CLAUDE.md) into the system prompt (src/agent/instructions.ts
// `projectInstructions`) with `existsSync` + `readFileSync(path)`: it follows symlinks, reads a
// file outside every root, and has no size bound. A block writes
// `AGENTS.md -> /any/host/file` in its root (a symlink needs no access to its target) and
// starts a child turn (`sub_loop`, or simply the next turn of `vis chat` / an HTTP client): the
// host reads the host file and sends it to the model as "project instructions", from where the
// model can hand it back to the sandbox. Skills and agent definitions are read beneath the
// root with openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS for exactly this reason; the
// instruction files are not.
//
// Reproduction: a host file outside the roots (standing in for ~/.ssh/id_rsa or a vis home's
// mcp.json) holds a marker; the parent's block runs
// `os.symlink(<host file>, 'AGENTS.md'); await sub_loop('CHILD-TASK')`; the child's request to
// the model carries the marker.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { pyCall } from '../agent/double.js'
import { harness } from '../agent/harness.js'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

test("a link planted as AGENTS.md does not put a host file into a turn's prompt", async () => {
  const hostDir = mkdtempSync(join(tmpdir(), 'vis-attack-host-secret-'))
  made.push(hostDir)
  const secretFile = join(hostDir, 'id_rsa')
  writeFileSync(secretFile, '-----BEGIN OPENSSH PRIVATE KEY----- HOST-SECRET-93a1\n')
  const h = await harness({ config: { subLoops: { concurrency: 2, timeoutMs: 120_000, maxDepth: 2 } } })
  const childRequests: string[] = []
  try {
    h.double.script([], (req) => {
      const b = JSON.stringify(req.body)
      if (b.includes('CHILD-TASK')) {
        childRequests.push(b)
        return { text: 'child done' }
      }
      if (b.includes('PARENT-' + 'DONE')) return { text: 'parent done' }
      return {
        calls: [
          pyCall(
            `import os\nos.symlink(${JSON.stringify(secretFile)}, 'AGENTS.md')\ntry:\n    print('PARENT-' + 'DONE', await sub_loop('CHILD-TASK: say hi'))\nexcept Exception as e:\n    print('PARENT-' + 'DONE refused', str(e)[:200])`,
          ),
        ],
      }
    })
    const r = await h.agent.turn(h.sessionId, 'PARENT-TASK')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.ok(childRequests.length > 0, 'the child turn made no model request')
    const leaked = childRequests.some((b) => b.includes('HOST-SECRET-93a1'))
    assert.equal(leaked, false, "the host file outside the roots reached the child's prompt as AGENTS.md")
  } finally {
    await h.close()
  }
})
