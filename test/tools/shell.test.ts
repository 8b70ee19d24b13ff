import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { isAlive } from '../../src/tools/proc/tree.js'
import { shellTool } from '../../src/tools/shell/shell.js'
import { call, context, guardFor, rejection, tempDir } from './helpers.js'

const KEYS = [
  'cmd',
  'cursor',
  'cwd',
  'duration_ms',
  'exit',
  'id',
  'op',
  'running',
  'signal',
  'stderr',
  'stdout',
  'timed_out',
  'truncated',
].sort()

// A login shell reads the user's profile; a bare home keeps these tests
// independent of this machine's (slow, lock-taking) shell start-up files.
process.env.HOME = await tempDir('vis-tools-home-')

const contexts: ReturnType<typeof context>[] = []
// Whatever a failed test left running is killed, so the runner can exit.
after(async () => {
  for (const c of contexts) await c.resources.dispose()
})

async function setup() {
  const ws = await tempDir()
  const ctx = context([ws])
  contexts.push(ctx)
  return { ws, shell: shellTool(guardFor([ws])), ctx }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function until<T>(f: () => Promise<T>, ok: (v: T) => boolean, ms = 20000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await f()
    if (ok(v) || Date.now() > end) return v
    await sleep(50)
  }
}

test('run: bash -lc in the workspace, exit codes, both streams, total shape', async () => {
  const { ws, shell, ctx } = await setup()
  const r = await call(shell, ctx, 'pwd; echo err >&2; exit 3')
  assert.deepEqual(Object.keys(r).sort(), KEYS)
  assert.equal(r.stdout, `${ws}\n`)
  assert.equal(r.stderr, 'err\n')
  assert.equal(r.exit, 3)
  assert.equal(r.timed_out, false)
  assert.equal(r.op, 'run')
  const sub = await call(shell, ctx, 'mkdir -p d && cd d && pwd')
  assert.equal(sub.stdout, `${ws}/d\n`)
  const inCwd = await call(shell, ctx, 'pwd', { cwd: 'd' })
  assert.equal(inCwd.stdout, `${ws}/d\n`)
  assert.equal((await rejection(call(shell, ctx, 'pwd', { cwd: '/etc' }))).code, 'tool.path-denied')
})

test('run: a huge stream keeps its head and tail and drops the middle', async () => {
  const { shell, ctx } = await setup()
  const r = await call(shell, ctx, 'echo FIRST; head -c 5000000 /dev/zero | tr "\\0" x; echo; echo LAST')
  assert.equal(r.truncated, true)
  assert.ok(r.stdout.startsWith('FIRST\nxxx'))
  assert.ok(r.stdout.endsWith('xxx\nLAST\n'))
  assert.match(r.stdout, /… \[\d+ bytes omitted\] …/)
  assert.ok(r.stdout.length < 40 * 1024)
})

test('run: a timeout kills the command and whatever it started', async () => {
  const { ws, shell, ctx } = await setup()
  const r = await call(shell, ctx, 'echo started; (sleep 30 & echo $! > bg.pid); sleep 30', {
    timeout_secs: 3,
  })
  assert.equal(r.timed_out, true)
  assert.equal(r.exit, null)
  assert.equal(r.stdout, 'started\n')
  const bg = Number((await import('node:fs')).readFileSync(`${ws}/bg.pid`, 'utf8'))
  assert.equal(
    await until(
      async () => isAlive(bg),
      (a) => !a,
    ),
    false,
  )
  // A command that finishes but leaves a background job behind does not leak it either.
  const left = await call(shell, ctx, 'sleep 30 & echo $!')
  assert.equal(left.exit, 0)
  assert.equal(
    await until(
      async () => isAlive(Number(left.stdout)),
      (a) => !a,
    ),
    false,
  )
})

test('background: a server under a pty, logs read, input sent, stopped', async () => {
  const { shell, ctx } = await setup()
  const script = 'echo "tty: $(tty)"; echo ready; while read -r line; do echo "got $line"; done'
  const start = await call(shell, ctx, script, { id: 'dev' })
  assert.deepEqual(Object.keys(start).sort(), KEYS)
  assert.equal(start.op, 'start')
  assert.equal(start.running, true)
  const logs = await until(
    () => call(shell, ctx, { op: 'logs', id: 'dev' }),
    (r) => r.stdout.includes('ready'),
  )
  assert.match(logs.stdout, /tty: \/dev\/pts\/\d+/)
  const sent = await until(
    () => call(shell, ctx, { op: 'send', id: 'dev', input: 'hello\n', wait_secs: 0.3 }),
    (r) => r.stdout.includes('got hello'),
  )
  assert.match(sent.stdout, /got hello/)
  // `since` returns only what came after a cursor.
  const cursor = sent.cursor
  await call(shell, ctx, { op: 'send', id: 'dev', input: 'again\n', wait_secs: 0.3 })
  const after = await until(
    () => call(shell, ctx, { op: 'logs', id: 'dev', since: cursor }),
    (r) => r.stdout.includes('got again'),
  )
  assert.doesNotMatch(after.stdout, /ready|got hello/)
  const dup = await rejection(call(shell, ctx, 'sleep 1', { id: 'dev' }))
  assert.equal(dup.code, 'tool.resource-exists')
  assert.deepEqual(
    ctx.resources.list().map((r) => [r.id, r.kind, r.running]),
    [['dev', 'shell', true]],
  )
  const pid = ctx.resources.list()[0]!.pid as number
  const stop = await call(shell, ctx, { op: 'stop', id: 'dev' })
  assert.equal(stop.running, false)
  assert.equal(isAlive(pid), false)
  assert.deepEqual(ctx.resources.list(), [])
  assert.equal((await rejection(call(shell, ctx, { op: 'logs', id: 'dev' }))).code, 'tool.not-found')
})

test('background: an exited process stays readable until stopped', async () => {
  const { shell, ctx } = await setup()
  await call(shell, ctx, 'echo done-here; exit 7', { id: 'once', wait_secs: 0 })
  const r = await until(
    () => call(shell, ctx, { op: 'logs', id: 'once' }),
    (x) => !x.running,
  )
  assert.equal(r.exit, 7)
  assert.match(r.stdout, /done-here/)
  assert.equal(
    (await rejection(call(shell, ctx, { op: 'send', id: 'once', input: 'x' }))).code,
    'tool.not-running',
  )
  // Starting again under the same id replaces the exited one.
  const again = await call(shell, ctx, 'echo second', { id: 'once' })
  assert.equal(again.op, 'start')
  await call(shell, ctx, { op: 'stop', id: 'once' })
})

test('disposal kills every process tree the session started, daemons included', async () => {
  const { ws, shell, ctx } = await setup()
  await call(shell, ctx, 'sleep 60 & echo $! > a.pid; wait', { id: 'a', wait_secs: 0.2 })
  // A double-forked daemon leaves the parent chain but not the session.
  await call(
    shell,
    ctx,
    '(setsid sleep 60 & echo $! > b.pid) ; (bash -c "sleep 60 & echo \\$! > c.pid" &); sleep 60',
    {
      id: 'b',
      wait_secs: 0.3,
    },
  )
  const pending = call(shell, ctx, 'sleep 60; echo never')
  const fs = await import('node:fs')
  const pids = await until(
    async () => ['a', 'b', 'c'].map((n) => Number(fs.readFileSync(`${ws}/${n}.pid`, 'utf8').trim() || 0)),
    (p) => p.every((x) => x > 0),
  ).catch(() => [])
  const trees = ctx.resources.list().map((r) => r.pid as number | null)
  assert.equal(trees.length, 3)
  assert.ok(pids.every((p) => isAlive(p)))
  await ctx.resources.dispose()
  for (const p of [...pids, ...trees]) {
    if (p)
      assert.equal(
        await until(
          async () => isAlive(p),
          (a) => !a,
          3000,
        ),
        false,
        `pid ${p} survived`,
      )
  }
  const r = await pending
  assert.doesNotMatch(r.stdout, /never/)
  assert.equal((await rejection(call(shell, ctx, 'true', { id: 'late' }))).code, 'tool.session-closed')
})

test('cancelling the call kills the running command', async () => {
  const { ws, shell, ctx } = await setup()
  const pending = call(shell, ctx, 'echo $$ > me.pid; sleep 30')
  const fs = await import('node:fs')
  const pid = await until(
    async () => Number(fs.existsSync(`${ws}/me.pid`) && fs.readFileSync(`${ws}/me.pid`, 'utf8').trim()),
    (p) => p > 0,
  )
  ctx.abort.abort()
  assert.equal((await rejection(pending)).code, 'tool.aborted')
  assert.equal(
    await until(
      async () => isAlive(pid),
      (a) => !a,
    ),
    false,
  )
})

test('shell argument errors', async () => {
  const { shell, ctx } = await setup()
  assert.equal((await rejection(call(shell, ctx))).code, 'tool.bad-args')
  assert.equal((await rejection(call(shell, ctx, { op: 'logs' }))).code, 'tool.bad-args')
  assert.equal((await rejection(call(shell, ctx, { op: 'explode', id: 'x' }))).code, 'tool.bad-args')
})
