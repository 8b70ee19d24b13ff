// Attack (eleventh outsider pass; SECURITY.md, Roots, "A vis home opened inside a LIVE session's root"
// (ninth and tenth passes): every jail records itself in `~/.vis/live-jails/` as
// `<pid>-<starttime>-<random>.json` of the vis process that started it, and "an entry whose process is gone
// or whose pid now names another process is removed by its reader"). The reader judges "gone" by reading
// `/proc/<pid>/stat` in ITS OWN pid namespace (src/util/live-jails.ts `startTimeOf`). A vis process of the
// same user and HOME that runs in another pid namespace (an editor packaged with Flatpak or Snap starting
// `vis mcp`, a dev container or `firejail`/`bwrap` wrapper sharing the home, `unshare --pid`) sees no such
// pid, so every other vis process's live jail is "stale" to it: it does not refuse a home inside their
// roots, and it DELETES their entries, so from then on no process of the user sees those jails either.
// The ninth pass's attack is open again: a home made inside a live root is accepted, and the running
// sandbox (a thread a block left) fills its `extensions/`, `mcp.json` or `trust/` for the host to run.
//
// Reproduction (private HOME for the whole tree): process A holds a live session on R. Control: `VIS_HOME=R/h
// vis ext list` is refused with home.inside-live-session-root. Then the same command under
// `unshare --pid --fork --mount-proc` (another pid namespace, same user and HOME) is not refused, and
// A's entry is gone from live-jails/ (a third, ordinary `vis ext list` with a home in R is accepted too).
// A fix: judge liveness by something every namespace sees the same way (a lock the vis process holds on
// its entry file: flock/OFD lock, tested with a non-blocking lock), and never delete what cannot be judged.
import assert from 'node:assert/strict'
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, test } from 'node:test'
import { waitFor } from '../sessions/helpers.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-pidns-'))
let holder: ChildProcess | undefined
after(async () => {
  if (holder && holder.exitCode === null) {
    holder.stdin?.end()
    await new Promise((done) => {
      const t = setTimeout(() => {
        holder?.kill('SIGKILL')
        done(undefined)
      }, 20_000)
      holder?.once('exit', () => {
        clearTimeout(t)
        done(undefined)
      })
    })
  }
  rmSync(base, { recursive: true, force: true })
})

const visBin = resolve(import.meta.dirname, '../../bin/vis.js')
const fixture = join(import.meta.dirname, 'fixtures', 'live-session-holder.ts')

test('a vis process in another pid namespace neither accepts a home inside a live root nor drops its entry', async () => {
  const H = join(base, 'user') // the person's HOME for every process here
  const R = join(base, 'R')
  for (const d of [H, R]) mkdirSync(d)
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: H }
  delete env.VIS_HOME
  holder = spawn(
    process.execPath,
    ['--import', import.meta.resolve('tsx'), fixture, R, join(base, 'home-a')],
    {
      cwd: base,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  )
  let out = ''
  let err = ''
  holder.stdout!.on('data', (b) => {
    out += b
  })
  holder.stderr!.on('data', (b) => {
    err += b
  })
  await waitFor(() => /ready/.test(out) || holder!.exitCode !== null, 120_000, 'the live session')
  assert.match(out, /ready/, `${out}\n${err}`)
  const entries = () =>
    readdirSync(join(H, '.vis', 'live-jails')).filter(
      (n) => n.endsWith('.json') && !n.endsWith('.state.json'),
    )
  assert.ok(entries().length > 0, 'the live session recorded its jail')

  const extList = (home: string, wrap: string[]) =>
    spawnSync(
      wrap[0] ?? process.execPath,
      [...wrap.slice(1), ...(wrap.length ? [process.execPath] : []), visBin, 'ext', 'list'],
      {
        cwd: base,
        env: { ...env, VIS_HOME: home },
        encoding: 'utf8',
        timeout: 60_000,
      },
    )
  // Control: an ordinary vis process refuses a home inside the live root.
  const control = extList(join(R, 'h1'), [])
  assert.match(
    `${control.stdout}${control.stderr}`,
    /home\.inside-live-session-root/,
    'the control is refused',
  )

  // The same user, the same HOME, another pid namespace.
  const other = extList(join(R, 'h2'), ['unshare', '--pid', '--fork', '--mount-proc'])
  const left = entries()
  const after = extList(join(R, 'h3'), [])
  assert.ok(
    /home\.inside-live-session-root/.test(`${other.stdout}${other.stderr}`) && left.length > 0,
    `a vis process in another pid namespace opened ${join(R, 'h2')} inside a live session's root ` +
      `(exit ${other.status}: ${`${other.stdout}${other.stderr}`.trim().slice(0, 200)}) and removed that ` +
      `session's live-jail entry (${left.length} left); an ordinary process then opened ${join(R, 'h3')} ` +
      `too (exit ${after.status}: ${`${after.stdout}${after.stderr}`.trim().slice(0, 200)})`,
  )
  assert.ok(existsSync(R))
})
