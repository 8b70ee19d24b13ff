// Which vis processes of the user run now, told the same way from every pid namespace
// (src/util/vis-processes.ts: each holds a FIFO open for reading for its whole life), and what
// that guards: the live jails' entries (live-jails.ts, home-guard.ts) and the temporary folders
// every live vis process keeps its jails' files in (util/host-state-dirs.ts, root-guard.ts).
// Both directions, with real processes in another pid namespace (`unshare --pid --fork
// --mount-proc`: a Flatpak/Snap editor, a dev container, same user and HOME):
// - a DEAD vis process's entry is still stale to them (killed with SIGKILL: nothing of it ran to
//   clean up), and they remove it and its FIFO;
// - an entry whose FIFO exists but cannot be tried is kept, never removed on a guess;
// - a root holding a live vis process's temp folder is refused (that process in another pid
//   namespace, with another TMPDIR), one beside it is allowed, and once it dies the root is allowed;
// - no jail holds its host's FIFO open (it would keep a dead host "live").
//
// This file runs with its own HOME, so the user's default home (which holds the live-jails folder)
// is the test's: no other test's processes are seen here.
import assert from 'node:assert/strict'
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, test } from 'node:test'
import { createRuntime } from '../../src/sessions/create-runtime.js'
import { isVisError } from '../../src/util/errors.js'
import { liveJailsDir } from '../../src/util/live-jails.js'
import { processKey } from '../../src/util/vis-processes.js'
import { python, waitFor } from '../sessions/helpers.js'

const fakeHome = realpathSync(mkdtempSync(join(tmpdir(), 'vis-live-processes-')))
process.env.HOME = fakeHome
delete process.env.VIS_HOME

const started: ChildProcess[] = []
after(() => {
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  rmSync(fakeHome, { recursive: true, force: true })
})

const visBin = resolve(import.meta.dirname, '../../bin/vis.js')
const OTHER_PID_NAMESPACE = ['unshare', '--pid', '--fork', '--mount-proc', '--kill-child']

const listing = (suffix: string) =>
  existsSync(liveJailsDir()) ? readdirSync(liveJailsDir()).filter((n) => n.endsWith(suffix)) : []

// `vis ext list` with this home, in another pid namespace: it opens (and so checks) the home.
function extListElsewhere(home: string) {
  const [cmd, ...wrap] = OTHER_PID_NAMESPACE
  return spawnSync(cmd!, [...wrap, process.execPath, visBin, 'ext', 'list'], {
    cwd: tmpdir(),
    env: { ...process.env, HOME: fakeHome, VIS_HOME: home },
    encoding: 'utf8',
    timeout: 120_000,
  })
}

// A child running a fixture with tsx (wrapped in `wrap`), its output collected.
function startFixture(fixture: string, args: string[], env: NodeJS.ProcessEnv, wrap: string[] = []) {
  const full = [...wrap, process.execPath, '--import', import.meta.resolve('tsx'), fixture, ...args]
  const child = spawn(full[0]!, full.slice(1), {
    cwd: tmpdir(),
    env: { ...process.env, HOME: fakeHome, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  started.push(child)
  const out = { text: '' }
  child.stdout!.on('data', (b) => {
    out.text += b
  })
  child.stderr!.on('data', (b) => {
    out.text += b
  })
  return { child, out }
}

const exited = (c: ChildProcess) =>
  c.exitCode !== null || c.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((done) => c.once('exit', () => done()))

test('a vis process killed with SIGKILL: a process in another pid namespace finds its entry stale and removes it and its FIFO', async () => {
  const R = join(fakeHome, 'dead-R')
  mkdirSync(R)
  const holder = startFixture(
    join(import.meta.dirname, '../attacks/fixtures/live-session-holder.ts'),
    [R, join(fakeHome, 'home-dead')],
    {},
  )
  await waitFor(
    () => /ready/.test(holder.out.text) || holder.child.exitCode !== null,
    120_000,
    'the live session',
  )
  assert.match(holder.out.text, /ready/)
  const key = `${holder.child.pid}-`
  const entries = () => listing('.json').filter((n) => n.startsWith(key) && !n.endsWith('.state.json'))
  const fifos = () => listing('.fifo').filter((n) => n.startsWith(key))
  assert.ok(entries().length > 0 && fifos().length === 1, `entry and FIFO: ${listing('')}`)

  // Live: refused from the other namespace too (the attack this file's FIFO is for).
  const live = extListElsewhere(join(R, 'h1'))
  assert.match(`${live.stdout}${live.stderr}`, /\[home\.inside-live-session-root\]/)
  assert.equal(entries().length > 0, true, 'a live entry is kept')

  holder.child.kill('SIGKILL')
  await exited(holder.child)
  const dead = extListElsewhere(join(R, 'h2'))
  assert.equal(dead.status, 0, `${dead.stdout}${dead.stderr}`)
  assert.deepEqual(entries(), [], 'the dead process’s entries are removed')
  assert.deepEqual(fifos(), [], 'and its FIFO')
})

test('an entry whose FIFO is there but cannot be tried is kept, and still refuses a home inside its root', () => {
  const R = join(fakeHome, 'unjudged-R')
  mkdirSync(R)
  mkdirSync(liveJailsDir(), { recursive: true })
  // A pid no process has here, so the /proc fallback alone would call it gone.
  const gone = spawnSync(process.execPath, ['-e', '']).pid as number
  const entry = join(liveJailsDir(), `${gone}-4242-0123456789ab.json`)
  const notFifo = join(liveJailsDir(), `${gone}-4242.fifo`)
  writeFileSync(entry, JSON.stringify({ pid: gone, starttime: '4242', roots: [R], masked: [] }))
  writeFileSync(notFifo, '') // a regular file: neither live nor dead can be told from it
  try {
    const r = extListElsewhere(join(R, 'h'))
    assert.match(`${r.stdout}${r.stderr}`, /\[home\.inside-live-session-root\]/)
    assert.ok(existsSync(entry) && existsSync(notFifo), 'what cannot be judged is not removed')
  } finally {
    rmSync(entry, { force: true })
    rmSync(notFifo, { force: true })
  }
})

test('a root holding the temp folder of a live vis process in another pid namespace is refused; beside it, or once that process died, allowed', async () => {
  const W = join(fakeHome, 'W')
  const tmpA = join(W, 'tmp')
  mkdirSync(tmpA, { recursive: true })
  const holder = startFixture(
    join(import.meta.dirname, 'fixtures', 'host-state-holder.ts'),
    [],
    { TMPDIR: tmpA },
    OTHER_PID_NAMESPACE,
  )
  await waitFor(
    () => /ready \d+/.test(holder.out.text) || holder.child.exitCode !== null,
    60_000,
    'the holder',
  )
  const otherPid = /ready (\d+)/.exec(holder.out.text)?.[1]
  assert.ok(otherPid, holder.out.text)
  const records = () => listing('.state.json').filter((n) => n.startsWith(`${otherPid}-`))
  assert.equal(records().length, 1, `its record: ${listing('')}`)
  assert.deepEqual(JSON.parse(readFileSync(join(liveJailsDir(), records()[0]!), 'utf8')).parents, [tmpA])

  const rt = await createRuntime({ python, home: join(fakeHome, 'home-b'), pool: { size: 0 } })
  try {
    for (const [root, verb] of [
      [W, 'contains'],
      [tmpA, 'is'],
    ] as const) {
      await assert.rejects(
        rt.createSession({ roots: [root] }),
        (err: unknown) =>
          isVisError(err) &&
          err.code === 'policy.root-holds-host-tmp' &&
          err.message.includes(
            `Root ${root} ${verb} the temporary directory of another vis process of this user (pid ${otherPid})`,
          ) &&
          // The other process's folder is not named: a client learns no more than that it exists.
          (root === tmpA || !err.message.includes(tmpA)) &&
          err.context.pid === Number(otherPid),
      )
    }
    // Beside it: an ordinary root.
    const beside = join(W, 'work')
    mkdirSync(beside)
    const s = await rt.createSession({ roots: [beside] })
    const r = await s.runBlock("print('beside')")
    assert.equal(r.stdout?.trim(), 'beside', JSON.stringify(r.error))
    await s.dispose()

    // Dead (SIGKILL: it removed nothing): its folder no longer blocks a root, and its record goes.
    const hostPid = Number(
      readFileSync(`/proc/${holder.child.pid}/task/${holder.child.pid}/children`, 'utf8').trim(),
    )
    assert.ok(hostPid > 0)
    holder.child.kill('SIGKILL') // --kill-child takes the holder with it
    await exited(holder.child)
    await waitFor(() => !existsSync(`/proc/${hostPid}`), 10_000, 'the holder to be gone')
    const again = await rt.createSession({ roots: [W] })
    await again.dispose()
    assert.deepEqual(records(), [], 'the dead process’s record is removed')
  } finally {
    await rt.close()
  }
})

// Every process below this one (bubblewrap, the worker) and the fds it holds open, as paths.
function descendantsFds(): Map<number, string[]> {
  const parentOf = new Map<number, number>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      parentOf.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
    } catch {
      // gone since the listing
    }
  }
  const below = (pid: number): boolean => {
    for (let p = parentOf.get(pid); p !== undefined && p > 1; p = parentOf.get(p))
      if (p === process.pid) return true
    return false
  }
  const out = new Map<number, string[]>()
  for (const pid of parentOf.keys()) {
    if (!below(pid)) continue
    try {
      out.set(
        pid,
        readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
          try {
            return [readlinkSync(`/proc/${pid}/fd/${fd}`)]
          } catch {
            return []
          }
        }),
      )
    } catch {
      // gone since the listing
    }
  }
  return out
}

test('no process of a jail holds its host’s FIFO open (an inherited one would keep a dead host live)', async () => {
  const R = join(fakeHome, 'fd-R')
  mkdirSync(R)
  const rt = await createRuntime({ python, home: join(fakeHome, 'home-fd'), pool: { size: 0 } })
  try {
    const s = await rt.createSession({ roots: [R] })
    try {
      const r = await s.runBlock('print(1)')
      assert.equal(r.error ?? null, null, JSON.stringify(r.error))
      // This process is known by its FIFO (its jail's entry needed it), and holds it.
      const fifo = join(liveJailsDir(), `${processKey()}.fifo`)
      assert.ok(existsSync(fifo))
      assert.ok(
        readdirSync('/proc/self/fd').some((fd) => {
          try {
            return readlinkSync(`/proc/self/fd/${fd}`) === fifo
          } catch {
            return false
          }
        }),
      )
      const jail = descendantsFds()
      assert.ok(jail.size >= 2, `the jail's processes: ${[...jail.keys()]}`)
      for (const [pid, links] of jail) assert.ok(!links.includes(fifo), `process ${pid} holds ${fifo}`)
    } finally {
      await s.dispose()
    }
  } finally {
    await rt.close()
  }
})
