// The engine's transient sessions (issue 35 §6): createRuntime is a facade over them, and an
// engine hands them out beside its sessions with history. A transient session runs blocks on
// real jailed workers from the engine's pool, with the engine's policy resolution (its roots
// pinned), and leaves nothing in the store; closing the engine ends it.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import * as engineFacade from '../../src/engine/create-runtime.js'
import { createEngine, type Engine } from '../../src/engine/engine.js'
import * as pinned from '../../src/sessions/create-runtime.js'

const python = process.env.VIS_PYTHON_VERSION
const base = mkdtempSync(join(tmpdir(), 'vis-transient-'))
process.env.VIS_HOME = join(base, 'home')

let engine: Engine | undefined
after(async () => {
  await engine?.close()
  rmSync(base, { recursive: true, force: true })
})

test("the pinned createRuntime is the engine's transient-session facade", () => {
  assert.equal(pinned.createRuntime, engineFacade.createRuntime)
})

test('a transient session runs blocks and leaves no row, block or event in the store; the engine closes it', async () => {
  const root = join(base, 'ws')
  mkdirSync(root)
  writeFileSync(join(root, 'data.txt'), 'from the root\n')
  engine = await createEngine({
    home: join(base, 'engine-home'),
    python,
    pool: { size: 0 },
    extensions: false,
    mcpServers: {},
  })
  const s = await engine.createTransientSession({ roots: [root], id: 'scratch-1' })
  const q = JSON.stringify
  const first = await s.runBlock(`y = 41\nprint(open(${q(join(root, 'data.txt'))}).read().strip())`)
  assert.equal(first.error, undefined, JSON.stringify(first.error))
  assert.match(first.stdout ?? '', /from the root/)
  // The host tools an engine session with roots gets (the engine's tools option), bound the same way.
  const viaTool = await s.runBlock('print(str(await cat("data.txt"))[:600])')
  assert.equal(viaTool.error, undefined, JSON.stringify(viaTool.error))
  assert.match(viaTool.stdout ?? '', /from the root/)
  const second = await s.runBlock('print(y + 1)')
  assert.equal((second.stdout ?? '').trim(), '42')
  // No history: the store knows no such session, and lists none.
  assert.deepEqual(engine.listSessions(), [])
  assert.throws(() => engine!.getSession('scratch-1'), { code: 'session.not-found' })
  assert.equal((engine.store.db.prepare('SELECT count(*) AS n FROM blocks').get() as { n: number }).n, 0)
  assert.equal(
    (engine.store.db.prepare('SELECT count(*) AS n FROM session_events').get() as { n: number }).n,
    0,
  )
  // The engine's worker accounting includes it, and its id is taken while it is open.
  assert.ok(engine.runtime.workerPids().includes(s.pid))
  assert.equal(engine.runtime.session('scratch-1'), s)
  await assert.rejects(engine.createTransientSession({ id: 'scratch-1' }), { code: 'session.exists' })
  // Rootless, as the engine's sessions with history: no host tools, blocks run.
  const bare = await engine.createTransientSession({})
  assert.equal((await bare.runBlock('print(6 * 7)')).stdout, '42\n')
  assert.deepEqual(bare.toolNames(), [])
  await engine.close()
  assert.equal(s.state, 'disposed')
  assert.equal(bare.state, 'disposed')
  await assert.rejects(engine.createTransientSession({}), { code: 'engine.closed' })
  engine = undefined
})

test("a transient session's roots are pinned by the engine's resolution: a root swapped for a link is refused", async () => {
  const rt = await pinned.createRuntime({ home: join(base, 'rt-home'), python, pool: { size: 0 } })
  try {
    const root = join(base, 'pinned')
    const elsewhere = join(base, 'elsewhere')
    mkdirSync(root)
    mkdirSync(elsewhere)
    writeFileSync(join(root, 'probe.txt'), 'inside\n')
    writeFileSync(join(elsewhere, 'secret.txt'), 'not yours\n')
    const s = await rt.createSession({ roots: [root] })
    const ok = await s.runBlock('print(str(await cat("probe.txt"))[:600])')
    assert.equal(ok.error, undefined, JSON.stringify(ok.error))
    assert.match(ok.stdout ?? '', /inside/)
    // Swap the root for a link to another directory after the session pinned it.
    renameSync(root, `${root}.old`)
    symlinkSync(elsewhere, root)
    const swapped = await s.runBlock(`try:
    print('read:', str(await cat("secret.txt"))[:200])
except Exception as e:
    print('refused:', str(e)[:300])`)
    assert.doesNotMatch(swapped.stdout ?? '', /not yours/)
    assert.match(
      swapped.stdout ?? '',
      /refused: .*(policy\.root-changed|no longer the directory)/,
      swapped.stdout ?? '',
    )
  } finally {
    await rt.close()
  }
})
