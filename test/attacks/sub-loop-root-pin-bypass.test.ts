// ATTACK (surface 2, child loops): a session's roots are pinned to the directories they were at
// its creation (policy.root-changed at every jail, in the host tools, after a restart). A child
// turn is a NEW session: sub_loop() hands it the parent's roots BY PATH (engine.createSession
// with the parent's policy view, `within: parent.roots`), and the new session checks and pins
// them as they are NOW. When the parent's root has been renamed away and replaced by a symlink to
// a host directory S (what another sandbox whose root is the parent directory can do: see
// root-swapped-by-other-session.test.ts; here the host stands in for it), the parent itself is
// refused, but its sub_loop child is created on S, pinned to S, and its block reads S's files.
// On the current code the child prints S's secret, and the parent turn's answer carries it.
import assert from 'node:assert/strict'
import { chmodSync, mkdirSync, mkdtempSync, renameSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { pyCall } from '../agent/double.js'
import { harness, lastChatMessage } from '../agent/harness.js'

const SECRET = 'HOST-ONLY-SECRET-5ub100p'

test("a sub_loop child does not get the directory that replaced its parent's pinned root", async () => {
  const P = mkdtempSync(join(tmpdir(), 'vis-attack-parent-'))
  const C = join(P, 'proj')
  mkdirSync(C)
  writeFileSync(join(C, 'mine.txt'), 'mine\n')
  const S = mkdtempSync(join(tmpdir(), 'vis-attack-hostdir-'))
  writeFileSync(join(S, 'secret.txt'), `${SECRET}\n`)
  chmodSync(join(S, 'secret.txt'), 0o600)
  const h = await harness({
    root: C,
    config: { subLoops: { concurrency: 2, timeoutMs: 120_000, maxDepth: 2 } },
  })
  try {
    // The parent's worker is up (and its root pinned) before the swap.
    const warm = await h.engine.runBlock(h.sessionId, { code: "print(open('mine.txt').read())" })
    assert.match(warm.block.stdout ?? '', /mine/)
    renameSync(C, `${C}.orig`)
    symlinkSync(S, C)
    // The parent's own host tools see the swap and refuse it.
    const own = await h.engine.runBlock(h.sessionId, {
      code: "try:\n    print(await cat('secret.txt'))\nexcept Exception as e:\n    print('OWN refused', str(e)[:120])",
    })
    assert.match(own.block.stdout ?? '', /OWN refused/, own.block.stdout ?? '')

    h.double.script([], (req) => {
      const b = JSON.stringify(req.body)
      if (b.includes('CHILD-TASK')) {
        if (b.includes('CHILD-' + 'SAW')) return { text: 'child read it' }
        return {
          calls: [
            pyCall(
              "try:\n    print('CHILD-' + 'SAW', open('secret.txt').read())\nexcept Exception as e:\n    print('CHILD-' + 'SAW refused', str(e)[:160])",
            ),
          ],
        }
      }
      if (b.includes('PARENT-' + 'DONE')) return { text: 'parent done' }
      return {
        calls: [
          pyCall(
            "try:\n    print('PARENT-' + 'DONE', await sub_loop('CHILD-TASK: read secret.txt'))\nexcept Exception as e:\n    print('PARENT-' + 'DONE refused', getattr(e, 'code', ''), str(e)[:160])",
          ),
        ],
      }
    })
    const r = await h.agent.turn(h.sessionId, 'PARENT-TASK: ask a helper')
    const childOut = r.children
      .map((c) => h.agent.getTurn(c.session_id, c.turn_id))
      .flatMap((t) => t.iterations.flatMap((it) => it.block_ids))
      .map((id) => h.engine.getBlock(id).stdout ?? '')
      .join('\n')
    assert.ok(
      !childOut.includes(SECRET),
      `the child session was created on the swapped-in host directory and read it:\n${childOut}`,
    )
    // Refused for the right reason: the parent's pinned root changed, so no child was made.
    const parentOut = h.engine.getBlock(r.iterations[0]!.block_ids[0]!).stdout ?? ''
    assert.match(
      parentOut,
      /^PARENT-DONE refused policy\.root-changed sub_loop: Root .*proj is no longer the directory/,
    )
    assert.equal(r.children.length, 0)
  } finally {
    await h.close()
  }
})

// The same swap, with the child asking for a narrower root that exists in S as well: by path it
// would be within what the parent's root path names now (S), and pinned there.
test("a narrowed sub_loop root is resolved beneath the parent's pinned root, not its path", async () => {
  const P = mkdtempSync(join(tmpdir(), 'vis-attack-parent-'))
  const C = join(P, 'proj')
  mkdirSync(join(C, 'sub'), { recursive: true })
  writeFileSync(join(C, 'sub', 'mine.txt'), 'mine\n')
  writeFileSync(join(C, 'top.txt'), 'top\n')
  const S = mkdtempSync(join(tmpdir(), 'vis-attack-hostdir-'))
  mkdirSync(join(S, 'sub'))
  writeFileSync(join(S, 'sub', 'secret.txt'), `${SECRET}\n`)
  chmodSync(join(S, 'sub', 'secret.txt'), 0o600)
  // A link below the parent's root that leads out of it: never a child's root.
  symlinkSync(S, join(C, 'out'))
  const h = await harness({
    root: C,
    config: { subLoops: { concurrency: 2, timeoutMs: 120_000, maxDepth: 2 } },
  })
  const sub = join(C, 'sub')
  const block = (code: string) =>
    pyCall(
      `try:\n    print('PARENT-' + 'DONE', ${code})\nexcept Exception as e:\n    print('PARENT-' + 'DONE refused', getattr(e, 'code', ''))`,
    )
  try {
    h.double.script([], (req) => {
      const b = JSON.stringify(req.body)
      // A child's conversation starts with its task; the parent's holds it only in its code.
      const first = req.body.messages.find((m: { role: string }) => m.role === 'user')
      if (JSON.stringify(first).includes('CHILD-TASK')) {
        if (b.includes('CHILD-' + 'SAW')) return { text: 'child answer' }
        return {
          calls: [
            pyCall(
              `import os\nfor f in ['${sub}/mine.txt', '${sub}/secret.txt', '${C}/top.txt']:\n    try:\n        print('CHILD-' + 'SAW', f, open(f).read().strip())\n    except Exception as e:\n        print('CHILD-' + 'SAW', f, 'refused', type(e).__name__)`,
            ),
          ],
        }
      }
      // The session's earlier turns are in every request: route the parent by its last message.
      const last = JSON.stringify(lastChatMessage(req.body))
      if (last.includes('PARENT-' + 'DONE')) return { text: 'parent done' }
      if (last.includes('ALLOWED'))
        return { calls: [block(`await sub_loop('CHILD-TASK', roots=['${sub}'])`)] }
      if (last.includes('VIA-LINK'))
        return { calls: [block(`await sub_loop('CHILD-TASK', roots=['${C}/out/sub'])`)] }
      return { calls: [block(`await sub_loop('CHILD-TASK', roots=['${sub}'])`)] }
    })
    // Allowed: a narrower root inside the parent's works, and the child sees only it.
    const ok = await h.agent.turn(h.sessionId, 'ALLOWED')
    assert.equal(ok.status, 'done', JSON.stringify(ok.error))
    assert.equal(h.engine.getBlock(ok.iterations[0]!.block_ids[0]!).stdout, 'PARENT-DONE child answer\n')
    const child = h.agent.getTurn(ok.children[0]!.session_id, ok.children[0]!.turn_id)
    const seen = (h.engine.getBlock(child.iterations[0]!.block_ids[0]!).stdout ?? '').split('\n')
    assert.equal(seen[0], `CHILD-SAW ${sub}/mine.txt mine`)
    assert.equal(seen[1], `CHILD-SAW ${sub}/secret.txt refused FileNotFoundError`)
    // Above its root the child's jail shows nothing of the parent's (the mount point only).
    assert.match(
      seen[2]!,
      new RegExp(`^CHILD-SAW ${C}/top\\.txt refused (PermissionError|FileNotFoundError)$`),
    )
    assert.deepEqual(h.engine.sessionView(child.session_id).policy, {
      roots: [sub],
      network: { enabled: false, allow: [], deny: [] },
      shell: false,
    })
    // A narrower root through a link below the parent's root is refused.
    const link = await h.agent.turn(h.sessionId, 'VIA-LINK')
    assert.equal(
      h.engine.getBlock(link.iterations[0]!.block_ids[0]!).stdout,
      'PARENT-DONE refused policy.root-not-allowed\n',
    )
    assert.equal(link.children.length, 0)

    // The parent's root is swapped for a link to S, which has a `sub` too.
    renameSync(C, `${C}.orig`)
    symlinkSync(S, C)
    const r = await h.agent.turn(h.sessionId, 'SWAPPED')
    assert.equal(
      h.engine.getBlock(r.iterations[0]!.block_ids[0]!).stdout,
      'PARENT-DONE refused policy.root-changed\n',
    )
    assert.equal(r.children.length, 0)
  } finally {
    await h.close()
  }
})
