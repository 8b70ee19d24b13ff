// A vis home inside a root of a running session's jail (src/util/home-guard.ts, live-jails.ts):
// refused unless that jail masks it. Both directions with real sessions and real `vis` processes:
// the default home and a home registered before the session still open while the session runs
// on the folder around them; a home made there afterwards is refused, with its code and a message
// naming the home, the root and the vis process; a dead jail's entry stops nothing.
//
// This file runs with its own HOME, so the user's default home (which holds both registries) is
// the test's, and no other test's sessions can refuse its homes.
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, test } from 'node:test'
import { openStore } from '../../src/persistence/store.js'
import { createRuntime } from '../../src/sessions/create-runtime.js'
import { isVisError } from '../../src/util/errors.js'
import { liveJailsDir } from '../../src/util/live-jails.js'
import { python, waitFor } from '../sessions/helpers.js'

const fakeHome = realpathSync(mkdtempSync(join(tmpdir(), 'vis-live-jails-')))
process.env.HOME = fakeHome
delete process.env.VIS_HOME
after(() => rmSync(fakeHome, { recursive: true, force: true }))

const visBin = resolve(import.meta.dirname, '../../bin/vis.js')

function vis(home: string | undefined, ...args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: fakeHome }
  if (home === undefined) delete env.VIS_HOME
  else env.VIS_HOME = home
  return spawnSync(process.execPath, [visBin, ...args], {
    cwd: tmpdir(),
    env,
    encoding: 'utf8',
    timeout: 120_000,
  })
}

const entries = () =>
  existsSync(liveJailsDir())
    ? readdirSync(liveJailsDir()).filter((n) => n.endsWith('.json') && !n.endsWith('.state.json'))
    : []

test('a session on the folder around vis homes: the default home and a home registered before it open, a home made after is refused', async () => {
  const defaultHome = join(fakeHome, '.vis')
  const before = join(fakeHome, 'before-home')
  const late = join(fakeHome, 'late-home')
  // Registered (and made) before the session starts: its jail masks it.
  const pre = vis(before, 'ext', 'list')
  assert.equal(pre.status, 0, pre.stderr)

  const rt = await createRuntime({ python, pool: { size: 0 } })
  try {
    const s = await rt.createSession({ roots: [fakeHome] })
    try {
      const r = await s.runBlock(
        [
          'import os',
          `print(os.listdir(${JSON.stringify(before)}), 'homes' in os.listdir(${JSON.stringify(defaultHome)}))`,
        ].join('\n'),
      )
      assert.equal(r.error ?? null, null, JSON.stringify(r.error))
      // Both are masked in the sandbox (only the worker's own outbox shows in its home), though they
      // hold files on the host.
      assert.equal(r.stdout?.trim(), '[] False')
      assert.ok(existsSync(join(before, 'vis.db')) && existsSync(join(defaultHome, 'homes')))
      assert.ok(entries().length >= 1, 'the session’s jail is listed as live')

      const ownDefault = vis(undefined, 'ext', 'list')
      assert.equal(ownDefault.status, 0, `the default home must open: ${ownDefault.stderr}`)
      const registered = vis(before, 'ext', 'list')
      assert.equal(registered.status, 0, `a home the jail masks must open: ${registered.stderr}`)

      const refused = vis(late, 'ext', 'list')
      assert.equal(refused.status, 1, refused.stdout)
      assert.match(refused.stderr, /\[home\.inside-live-session-root\]/)
      assert.ok(refused.stderr.includes(`The vis home ${late} lies inside ${fakeHome}`), refused.stderr)
      assert.match(
        refused.stderr,
        new RegExp(`vis process ${process.pid} runs now \\(its sandbox runs as pid \\d+\\)`),
      )
      assert.match(
        refused.stderr,
        /Stop that session \(or its vis process\), or choose a VIS_HOME outside its roots/,
      )
      assert.ok(!existsSync(late), 'nothing is made in a refused home')

      // The same refusal in-process, with its context; and `vis mcp`, which reads mcp.json first.
      assert.throws(
        () => openStore({ home: join(late, 'nested') }),
        (err: unknown) =>
          isVisError(err) &&
          err.code === 'home.inside-live-session-root' &&
          err.context.root === fakeHome &&
          err.context.pid === process.pid &&
          err.context.path === join(late, 'nested'),
      )
      const mcp = vis(late, 'mcp', '--root', tmpdir())
      assert.match(mcp.stderr, /\[home\.inside-live-session-root\]/)
      // `vis run` reads agent.json (approvals, providers) before it opens the store.
      const run = vis(late, 'run', '--root', tmpdir(), 'say hi')
      assert.match(run.stderr, /\[home\.inside-live-session-root\]/)
      assert.ok(!existsSync(late))
    } finally {
      await s.dispose()
    }
  } finally {
    await rt.close()
  }
  // The jail is gone: so is its entry, and the home opens.
  await waitFor(() => entries().length === 0, 10_000, 'the live entry to be removed')
  const later = vis(late, 'ext', 'list')
  assert.equal(later.status, 0, later.stderr)
})

test('an entry whose vis process is gone, or whose pid now names another process, is ignored and removed', () => {
  const R = join(fakeHome, 'R')
  mkdirSync(R, { recursive: true })
  mkdirSync(liveJailsDir(), { recursive: true })
  const gone = spawnSync(process.execPath, ['-e', '']).pid as number
  const stale = [
    { pid: gone, starttime: '4242' },
    // This test's own process, but not the one that started at tick 1 after boot.
    { pid: process.pid, starttime: '1' },
  ].map(({ pid, starttime }) => {
    const file = join(liveJailsDir(), `${pid}-${starttime}-0123456789ab.json`)
    writeFileSync(file, JSON.stringify({ pid, starttime, roots: [R], masked: [] }))
    return file
  })
  const opened = vis(join(R, 'h'), 'ext', 'list')
  assert.equal(opened.status, 0, opened.stderr)
  for (const f of stale) assert.ok(!existsSync(f), `${f} is removed`)
})

test('a home opened around a live session’s root is refused: that root would be a folder of the home', async () => {
  const outer = join(fakeHome, 'outer')
  const root = join(outer, 'extensions', 'pkg')
  mkdirSync(root, { recursive: true })
  const rt = await createRuntime({ python, pool: { size: 0 } })
  try {
    const s = await rt.createSession({ roots: [root] })
    try {
      const r = await s.runBlock('print(1)')
      assert.equal(r.error ?? null, null, JSON.stringify(r.error))
      const refused = vis(outer, 'ext', 'list')
      assert.equal(refused.status, 1, refused.stdout)
      assert.ok(
        refused.stderr.includes(`The vis home ${outer} holds ${root}, a root of a session`),
        refused.stderr,
      )
      assert.match(refused.stderr, /\[home\.inside-live-session-root\]/)
    } finally {
      await s.dispose()
    }
  } finally {
    await rt.close()
  }
})

// The race the second look is for: a home looked at (no jail yet), then a session starts on the
// folder around it and reads the registry before the home's folder exists (nothing to mask), then
// the folder is made. A test-only pause (VIS_TEST_PAUSE_HOME_OPEN) holds the vis process between its
// look and the making of the folder while the session starts, every time. `vis sessions list` opens
// only the store, so the store's own second look is what refuses.
test('a jail that starts between a home’s first look and the making of its folder: the home is refused once made', async () => {
  const R = join(fakeHome, 'race')
  mkdirSync(R)
  const home = join(R, 'h')
  const gate = join(fakeHome, 'race-gate')
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: fakeHome,
    VIS_HOME: home,
    VIS_TEST_PAUSE_HOME_OPEN: gate,
  }
  const child = spawn(process.execPath, [visBin, 'sessions', 'list'], {
    cwd: tmpdir(),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (d) => {
    stderr += d
  })
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
  const rt = await createRuntime({ python, pool: { size: 0 } })
  try {
    await waitFor(() => existsSync(`${gate}.reached`), 60_000, 'the vis process to look at its home')
    assert.ok(!existsSync(home), 'the folder is not made yet')
    const s = await rt.createSession({ roots: [R] })
    try {
      const r = await s.runBlock('print(1)')
      assert.equal(r.error ?? null, null, JSON.stringify(r.error))
      writeFileSync(gate, '')
      assert.equal(await exited, 1, stderr)
      assert.match(stderr, /\[home\.inside-live-session-root\]/)
      assert.ok(stderr.includes(`The vis home ${home} lies inside ${R}`), stderr)
    } finally {
      await s.dispose()
    }
  } finally {
    child.kill()
    await rt.close()
  }
})
