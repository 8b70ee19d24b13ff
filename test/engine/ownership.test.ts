// Several engines on one home (issue 32 §1): each runs the sessions it owns; another engine
// reads them, and its interrupt and close reach the owner; nobody else runs blocks in them; only
// what a dead owner left running is closed as abandoned.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { createEngine, type Engine } from '../../src/engine/index.js'
import { openStore } from '../../src/persistence/index.js'
import { isVisError } from '../../src/util/errors.js'

const python = process.env.VIS_PYTHON_VERSION
const dirs = () => ({
  home: mkdtempSync(join(tmpdir(), 'vis-own-home-')),
  root: mkdtempSync(join(tmpdir(), 'vis-own-root-')),
})

async function until(cond: () => boolean, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

test('a second engine on the home leaves the first one running; it reads, and interrupt and close reach the owner', async () => {
  const { home, root } = dirs()
  const owner = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  let other: Engine | undefined
  try {
    const s = await owner.createSession({ roots: [root] })
    const first = await owner.runBlock(s.id, { code: 'X = 41' })
    assert.equal(first.block.status, 'done')
    const long = await owner.submitBlock(s.id, {
      code: 'import time\nprint("up", flush=True)\ntime.sleep(60)',
    })
    await until(() => owner.getBlock(long.block.id).status === 'running', 'the block to run')

    // Starting another engine does not close what the owner is running.
    other = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
    assert.equal(other.abandonedAtStart, 0)
    assert.equal(other.getBlock(long.block.id).status, 'running')
    assert.equal(other.ownedElsewhere(s.id), true)
    assert.equal(owner.ownedElsewhere(s.id), false)
    // It reads the session, but runs nothing in it.
    assert.equal(other.getSession(s.id).blocks[0]!.status, 'done')
    await assert.rejects(other.runBlock(s.id, { code: 'X + 1' }), (e) => {
      assert.ok(isVisError(e, 'session.owned-elsewhere'), String(e))
      assert.match((e as Error).message, new RegExp(`another vis process \\(pid ${process.pid}\\)`))
      return true
    })

    // Its interrupt lands in the owner's running block.
    const r = await other.interrupt(s.id)
    assert.equal(r.landed, true, JSON.stringify(r))
    assert.equal(r.block_id, long.block.id)
    const done = await long.done
    assert.equal(done.status, 'done')
    assert.equal(done.error?.code, 'block.interrupted', JSON.stringify(done.error))
    // The owner's session is intact.
    assert.equal((await owner.runBlock(s.id, { code: 'X + 1' })).block.result, 42)

    // Its close is done by the owner, which stops the worker and gives the session up.
    const closed = await other.closeSession(s.id)
    assert.equal(closed.state, 'closed')
    assert.equal(owner.sessionView(s.id).worker === 'live', false)
    await assert.rejects(owner.runBlock(s.id, { code: '1' }), (e) => isVisError(e, 'session.closed'))
    assert.equal(other.ownedElsewhere(s.id), false)

    // Sessions of its own run beside the owner's.
    const mine = await other.createSession({ roots: [root] })
    assert.equal((await other.runBlock(mine.id, { code: '2 * 21' })).block.result, 42)
    await assert.rejects(owner.runBlock(mine.id, { code: '1' }), (e) =>
      isVisError(e, 'session.owned-elsewhere'),
    )
  } finally {
    await other?.close()
    await owner.close()
  }
  // Each engine took its socket with it.
  assert.deepEqual(existsSync(join(home, 'run')) ? readdirSync(join(home, 'run')) : [], [])
})

test('what a dead owner left running is closed at start, and its session is taken at once', async () => {
  const { home } = dirs()
  // A pid that existed and is gone now: a process that has exited.
  const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  })
  const deadPid = Number(gone.stdout)
  assert.ok(deadPid > 0)
  const store = openStore({ home })
  store.sessions.create({ id: 'ses_dead', policy: { roots: [], network: {}, shell: false } })
  store.sessions.create({ id: 'ses_live', policy: { roots: [], network: {}, shell: false } })
  const dead = store.blocks.start({ sessionId: 'ses_dead', code: 'while True: pass' }).block
  const live = store.blocks.start({ sessionId: 'ses_live', code: 'while True: pass' }).block
  // The dead process's lease is still unexpired; the live one is this test process's.
  const ref = (pid: number) => ({ id: `local:${hostname()}:${pid}:0badf00d`, url: 'unix:/nonexistent.sock' })
  assert.equal(store.leases.acquire('ses_dead', ref(deadPid), 60_000).acquired, true)
  assert.equal(store.leases.acquire('ses_live', ref(process.pid), 60_000).acquired, true)
  store.close()

  const engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    assert.equal(engine.abandonedAtStart, 1)
    assert.equal(engine.getBlock(dead.id).error?.code, 'block.abandoned')
    assert.equal(engine.getBlock(live.id).status, 'running')
    // The dead owner's session is this engine's at once, not after the lease's expiry.
    assert.equal((await engine.runBlock('ses_dead', { code: '6 * 7' })).block.result, 42)
    // The live owner's is not, and its unreachable socket is said to be so.
    await assert.rejects(engine.runBlock('ses_live', { code: '1' }), (e) =>
      isVisError(e, 'session.owned-elsewhere'),
    )
    await assert.rejects(engine.interrupt('ses_live'), (e) => {
      assert.ok(isVisError(e, 'session.owner-unreachable'), String(e))
      assert.match((e as Error).message, /did not answer/)
      return true
    })
  } finally {
    await engine.close()
  }
})
