// ATTACK (surface 3, roots, trunk): a session's root is re-opened by path at every jail (each
// shell() call builds one) and by the host file tools at every call. Its parent directory is
// writable by any sandbox whose root contains it (a workspace and its subproject; two clients
// of one server). Session B (root P) renames P/proj away and puts a symlink to a host directory
// S there; session A (root P/proj) then reaches S as if it were its root: host `cat` returns
// S's root-only 0600 secret, `write` lands a file in S, and the next shell() jail binds S
// read-write. Without an operator allow-list nothing refuses S (it is not /proc, /sys, /dev,
// /run nor the vis home): the root guard checks what the path names NOW, which is the point
// of the attack. On the current code all three reach S.
import assert from 'node:assert/strict'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'
import { newHome, python } from '../drafts/helpers.js'

const SECRET = 'HOST-ONLY-SECRET-d00dfeed'

test("another sandbox swapping a session's root for a symlink does not hand it the link's target", async () => {
  const home = newHome()
  const P = mkdtempSync(join(tmpdir(), 'vis-attack-parent-'))
  const C = join(P, 'proj')
  mkdirSync(C)
  const S = mkdtempSync(join(tmpdir(), 'vis-attack-hostdir-'))
  writeFileSync(join(S, 'secret.txt'), `${SECRET}\n`)
  chmodSync(join(S, 'secret.txt'), 0o600)
  const e = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    const a = await e.createSession({ roots: [C], shell: true })
    const b = await e.createSession({ roots: [P], shell: true })
    // Before the swap the root serves all three (the pins do not stand in the way).
    const warm = await e.runBlock(a.id, {
      code: `await write('mine.txt', 'ok')
print(await cat('mine.txt'))
print((await shell('cat mine.txt'))['stdout'])`,
    })
    assert.equal(warm.block.error, null, JSON.stringify(warm.block))
    assert.equal((warm.block.stdout ?? '').match(/ok/g)?.length, 2, warm.block.stdout ?? '')
    const wb = await e.runBlock(b.id, {
      code: `r = await shell(${JSON.stringify(`mv ${C} ${C}.orig && ln -s ${S} ${C} && echo swapped`)})
print(r['stdout'])`,
    })
    assert.match(wb.block.stdout ?? '', /swapped/, JSON.stringify(wb.block))
    const r = await e.runBlock(a.id, {
      code: `out = {}
for name, call in [('cat', cat('secret.txt')), ('write', write('planted-by-tool.txt', 'x')),
                   ('shell', shell('cat secret.txt; echo y > planted-by-shell.txt'))]:
    try:
        out[name] = str(await call)[:300]
    except Exception as e:
        out[name] = 'refused: ' + str(e)[:200]
for k, v in out.items():
    print(k, '=>', v)`,
    })
    const stdout = r.block.stdout ?? ''
    const reached = {
      catLeaked: /cat =>.*HOST-ONLY-SECRET/.test(stdout),
      shellLeaked: /shell =>.*HOST-ONLY-SECRET/.test(stdout),
      toolWrote: existsSync(join(S, 'planted-by-tool.txt')),
      shellWrote: existsSync(join(S, 'planted-by-shell.txt')),
    }
    assert.deepEqual(
      reached,
      { catLeaked: false, shellLeaked: false, toolWrote: false, shellWrote: false },
      stdout,
    )
    // Refused for the right reason: the root is no longer the directory the session was made with.
    for (const name of ['cat', 'write', 'shell']) {
      assert.match(
        stdout,
        new RegExp(`${name} => refused: .*(policy\\.root-changed|no longer the directory)`),
        stdout,
      )
    }
    // Put back, the same directory serves again.
    const back = await e.runBlock(b.id, {
      code: `r = await shell(${JSON.stringify(`rm ${C} && mv ${C}.orig ${C} && echo restored`)})
print(r['stdout'])`,
    })
    assert.match(back.block.stdout ?? '', /restored/, JSON.stringify(back.block))
    const again = await e.runBlock(a.id, {
      code: `print(await cat('mine.txt'))
print((await shell('cat mine.txt'))['stdout'])`,
    })
    assert.equal(again.block.error, null, JSON.stringify(again.block))
    assert.equal((again.block.stdout ?? '').match(/ok/g)?.length, 2, again.block.stdout ?? '')
  } finally {
    await e.close()
    rmSync(P, { recursive: true, force: true })
    rmSync(S, { recursive: true, force: true })
  }
})
