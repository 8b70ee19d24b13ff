// ATTACK (surface 2, drafts): the draft's real root is opened BY PATH when the diff is rendered
// and when the draft is applied, and a symlink at that path is followed. The path's parent is
// not the draft session's to protect: any other sandbox whose root contains it (a workspace
// and its subproject, two MCP clients on one serve root, a second session of the same agent)
// can rename the real directory away and put a symlink there, pointing anywhere on the host.
// Here session B (root P) swaps P/proj for a symlink to a host directory S holding a root-only
// 0600 secret; session A (root P/proj, in a draft) then
//  - reads the secret: its draft_diff()/GET …/draft/diff compares its file `secret.txt` with
//    S/secret.txt and prints the host file's lines,
//  - writes outside every root: apply (ours) lands the draft's files in S, as the host user.
// On the current code both happen.
import assert from 'node:assert/strict'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'
import { newHome, python } from '../drafts/helpers.js'

const SECRET = 'HOST-ONLY-SECRET-5ca1ab1e'

test("another sandbox swapping a draft's real root for a symlink neither leaks nor lands outside", async () => {
  const home = newHome()
  const P = mkdtempSync(join(tmpdir(), 'vis-attack-parent-'))
  const C = join(P, 'proj')
  mkdirSync(C)
  writeFileSync(join(C, 'readme.txt'), 'project\n')
  const S = mkdtempSync(join(tmpdir(), 'vis-attack-hostdir-'))
  writeFileSync(join(S, 'secret.txt'), `${SECRET}\n`)
  chmodSync(join(S, 'secret.txt'), 0o600)
  const e = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    const a = await e.createSession({ roots: [C] })
    const b = await e.createSession({ roots: [P], shell: true })
    await e.drafts.create(a.id, 'work')
    const wa = await e.runBlock(a.id, {
      code: `open(${JSON.stringify(join(C, 'secret.txt'))}, 'w').write('mine\\n')
open(${JSON.stringify(join(C, 'planted.txt'))}, 'w').write('written by the sandbox\\n')`,
    })
    assert.equal(wa.block.error, null, JSON.stringify(wa.block.error))
    // Session B, a sandbox over the parent, swaps the directory for a link (shell: no audit hook;
    // the link's text is only a string in B's root).
    const wb = await e.runBlock(b.id, {
      code: `r = await shell(${JSON.stringify(`mv ${C} ${C}.orig && ln -s ${S} ${C} && echo swapped`)})
print(r['stdout'])`,
    })
    assert.match(wb.block.stdout ?? '', /swapped/, JSON.stringify(wb.block))

    let diffText = ''
    try {
      diffText = JSON.stringify(await e.drafts.diff(a.id))
    } catch (err) {
      diffText = String(err)
    }
    let applied = ''
    try {
      applied = JSON.stringify(await e.drafts.apply(a.id, { ours: true }))
    } catch (err) {
      applied = String(err)
    }
    const landed = existsSync(join(S, 'planted.txt'))
    const overwritten = readFileSync(join(S, 'secret.txt'), 'utf8') !== `${SECRET}\n`
    const leaked = diffText.includes(SECRET)
    assert.deepEqual(
      { leaked, landed, overwritten },
      { leaked: false, landed: false, overwritten: false },
      `diff: ${diffText.slice(diffText.indexOf('a/secret.txt'), diffText.indexOf('a/secret.txt') + 200)}\napply: ${applied}`,
    )
    // Refused for the right reason, by its stable code.
    await assert.rejects(
      e.drafts.diff(a.id),
      (err: Error & { code?: string }) => err.code === 'policy.root-changed',
    )
    await assert.rejects(
      e.drafts.apply(a.id, { ours: true }),
      (err: Error & { code?: string }) => err.code === 'policy.root-changed',
    )
    // Put back, the same directory is the draft's root again: its diff and apply work.
    const back = await e.runBlock(b.id, {
      code: `r = await shell(${JSON.stringify(`rm ${C} && mv ${C}.orig ${C} && echo restored`)})
print(r['stdout'])`,
    })
    assert.match(back.block.stdout ?? '', /restored/, JSON.stringify(back.block))
    assert.match(JSON.stringify(await e.drafts.diff(a.id)), /planted\.txt/)
    await e.drafts.apply(a.id, { ours: true })
    assert.equal(readFileSync(join(C, 'planted.txt'), 'utf8'), 'written by the sandbox\n')
  } finally {
    await e.close()
    rmSync(P, { recursive: true, force: true })
    rmSync(S, { recursive: true, force: true })
  }
})
