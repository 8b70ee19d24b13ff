// ATTACK (surface 3, roots: "a root swapped for a symlink between sessions ... SECURITY.md says
// roots are pinned"): the pins (st_dev:st_ino of each root at creation) live only in the host
// process's memory. Session B (root = a workspace) renames session A's root (its subproject) away
// and puts a symlink to any host directory in its place. While the host runs, A's jails refuse
// (policy.root-changed). But the host restarts (`vis serve` restart, an upgrade, a crash, or a
// cluster node dying and another taking the session over), and the reopened session "pins anew
// at its first worker start": it pins the symlink's TARGET. A's sandbox then reads and writes
// that host directory (here a stand-in for /etc or ~/.ssh: a directory with a secret file), with
// no allow-list configured (the default). On the current code, after the restart A's block lists
// the host directory's secret and plants a file in it.
// Fixed: the pins are stored with the session (src/engine/stored-policy.ts) and the reopened
// session is held to them: policy.root-changed, while a session whose root is unchanged reopens.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'
import { isVisError } from '../../src/util/errors.js'

const python = process.env.VIS_PYTHON_VERSION
const home = mkdtempSync(join(tmpdir(), 'vis-attack-pinrestart-home-'))
const ws = mkdtempSync(join(tmpdir(), 'vis-attack-pinrestart-ws-'))
const victim = mkdtempSync(join(tmpdir(), 'vis-attack-pinrestart-hostdir-'))
after(() => {
  for (const d of [home, ws, victim]) rmSync(d, { recursive: true, force: true })
})

test('a root swapped for a symlink stays refused after the host restarts', async () => {
  const project = join(ws, 'project')
  mkdirSync(project)
  writeFileSync(join(project, 'README'), 'project\n')
  writeFileSync(join(victim, 'host-secret'), 'HOST-SECRET\n')
  let e = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  const A = await e.createSession({ roots: [project] })
  const B = await e.createSession({ roots: [ws] })
  try {
    const swap = await e.runBlock(B.id, {
      code: `import os
os.rename(${JSON.stringify(project)}, ${JSON.stringify(`${project}.old`)})
os.symlink(${JSON.stringify(victim)}, ${JSON.stringify(project)})
print('swapped')`,
      timeout_ms: 20_000,
    })
    assert.equal(swap.block.stdout, 'swapped\n', JSON.stringify(swap.block.error))
  } finally {
    await e.close()
  }
  e = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    // The refusal comes as the block's error (the worker could not start) or as a thrown one.
    let refusal: { code?: string; message?: string } | null = null
    let out = ''
    try {
      const r = await e.runBlock(A.id, {
        code: `import os
print(sorted(os.listdir(${JSON.stringify(project)})))
open(os.path.join(${JSON.stringify(project)}, 'planted-by-sandbox'), 'w').write('x')`,
        timeout_ms: 20_000,
      })
      out = r.block.stdout ?? ''
      refusal = r.block.error
    } catch (err) {
      refusal = isVisError(err) ? err : { message: String(err) }
    }
    assert.ok(
      !existsSync(join(victim, 'planted-by-sandbox')) && !/HOST-SECRET|host-secret/.test(out),
      `after a restart session A's root followed the swapped-in symlink to ${victim}: ${out}`,
    )
    assert.equal(refusal?.code, 'policy.root-changed', JSON.stringify(refusal))
    assert.match(refusal?.message ?? '', /no longer the directory it was when this session was created/)
    assert.ok(!(refusal?.message ?? '').includes(victim), 'the refusal names where the link leads')
    // Both directions: B's root is unchanged, so B reopens and works after the restart.
    const rb = await e.runBlock(B.id, {
      code: `import os\nprint(sorted(os.listdir(${JSON.stringify(ws)})))`,
      timeout_ms: 20_000,
    })
    assert.equal(rb.block.error, null, JSON.stringify(rb.block.error))
    assert.match(rb.block.stdout ?? '', /project\.old/)
  } finally {
    await e.close()
  }
})

// A cluster node on another machine takes the session over: device numbers are that machine's,
// so only the inode is compared there. A swapped root is still refused; an unchanged one opens.
test('pins taken on another machine still refuse a swapped root, by inode', async () => {
  const project = join(ws, 'project2')
  const kept = join(ws, 'kept')
  mkdirSync(project)
  mkdirSync(kept)
  let e = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  const A = await e.createSession({ roots: [project] })
  const K = await e.createSession({ roots: [kept] })
  // As if the rows were written by a node on another machine whose devices are numbered apart.
  for (const id of [A.id, K.id]) {
    const row = e.store.db.prepare('SELECT policy FROM sessions WHERE id = ?').get(id) as { policy: string }
    const p = JSON.parse(row.policy) as { pins: Record<string, string>; pinned_on: string }
    assert.ok(p.pinned_on, 'the pins are stored with the machine that took them')
    p.pins = Object.fromEntries(Object.entries(p.pins).map(([k, v]) => [k, `999999:${v.split(':')[1]}`]))
    p.pinned_on = 'another-machine'
    e.store.db.prepare('UPDATE sessions SET policy = ? WHERE id = ?').run(JSON.stringify(p), id)
  }
  await e.close()
  renameSync(project, `${project}.old`)
  symlinkSync(victim, project)
  e = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    const r = await e.runBlock(A.id, {
      code: `import os\nprint(sorted(os.listdir(${JSON.stringify(project)})))`,
      timeout_ms: 20_000,
    })
    assert.equal(r.block.error?.code, 'policy.root-changed', JSON.stringify(r.block))
    assert.doesNotMatch(r.block.stdout ?? '', /host-secret/)
    const rk = await e.runBlock(K.id, { code: 'print("kept works")', timeout_ms: 20_000 })
    assert.equal(rk.block.error, null, JSON.stringify(rk.block.error))
    assert.equal(rk.block.stdout, 'kept works\n')
    // Clients never see the pins.
    assert.equal('pins' in (e.sessionView(K.id).policy as object), false)
  } finally {
    await e.close()
  }
})
