// `vis serve` as its own process, killed with SIGKILL while blocks run, then started again:
// every acknowledged block is there, the database is whole, and the sessions' defs come back.
import assert from 'node:assert/strict'
import { type ChildProcess, spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { openStore } from '../../src/persistence/index.js'
import { client, finishedFor, openEvents, python, spawnServe, tempHome, waitFor } from './helpers.js'

const { home, root } = tempHome('http-crash')
const vis = join(import.meta.dirname, 'fixtures', 'vis.ts')
const env = {
  ...process.env,
  VIS_HOME: home,
  VIS_TOKEN: '',
  ...(python ? { VIS_PYTHON_VERSION: python } : {}),
}
const children: ChildProcess[] = []

after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
})

// Starts `vis serve --port 0` and reads the URL and the curl example it prints.
async function serve(): Promise<{
  child: ChildProcess
  url: string
  banner: string
  auth: Record<string, string>
}> {
  const args = ['--pool', '1']
  if (python) args.push('--python', python)
  const { child, out: output, err } = await spawnServe(args, env)
  children.push(child)
  const out = output()
  assert.equal(child.exitCode, null, `vis serve exited: ${err()}`)
  const url = /serving (http:\/\/\S+)/.exec(out)![1]!
  // No VIS_TOKEN: vis serve made one and printed the page URL carrying it.
  const token = /open: \S+\/\?token=(\S+)/.exec(out)![1]!
  return { child, url, banner: out, auth: { authorization: `Bearer ${token}` } }
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const exited = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      resolve({ code: child.exitCode, signal: child.signalCode })
    else child.once('exit', (code, signal) => resolve({ code, signal }))
  })

test('SIGKILL while blocks run loses nothing acknowledged; defs come back after the restart', async () => {
  const first = await serve()
  assert.match(first.banner, /^vis serving http:\/\/127\.0\.0\.1:\d+/m)
  assert.match(
    first.banner,
    /curl -s -H "Authorization: Bearer [\w-]{43}" -X POST http:\/\/127\.0\.0\.1:\d+\/v1\/sessions/,
  )
  let call = client(first.url, first.auth)

  const a = (await call('POST', '/v1/sessions', { roots: [root], title: 'A' })).body.id as string
  const b = (await call('POST', '/v1/sessions', { title: 'B' })).body.id as string
  const acknowledged = new Map<string, string[]>([
    [a, []],
    [b, []],
  ])
  const run = async (sid: string, code: string, headers: Record<string, string> = {}) => {
    const r = await call('POST', `/v1/sessions/${sid}/blocks`, { code, timeout_ms: 60_000 }, headers)
    assert.ok(r.status === 200 || r.status === 202, r.text)
    acknowledged.get(sid)!.push(r.body.id)
    return r
  }
  assert.equal((await run(a, 'def inc(x):\n    return x + 1\nBASE = 40')).body.error, null)
  assert.equal(
    (await run(b, 'class Point:\n    def __init__(self, x):\n        self.x = x\nimport json')).body.error,
    null,
  )
  assert.equal((await run(a, 'inc(BASE)')).body.result, 41)

  // Blocks in flight at the kill: one running in each session, one queued behind it in A.
  const sse = await openEvents(`${first.url}/v1/sessions/${a}/events`, first.auth)
  const slow = 'import time\nprint("working", flush=True)\ntime.sleep(60)'
  const running = await run(a, slow, { Prefer: 'respond-async' })
  assert.equal(running.status, 202)
  await run(a, 'print("queued")', { Prefer: 'respond-async' })
  await run(b, slow, { Prefer: 'respond-async' })
  await sse.waitFor((evs) => evs.some((e) => e.event === 'output'), 30_000, 'the slow block to print')
  await sse.close()

  first.child.kill('SIGKILL')
  assert.equal((await exited(first.child)).signal, 'SIGKILL')

  // Its workers do not outlive it (their logs are named by pid).
  const pids = readdirSync(join(home, 'logs'))
    .map((f) => /^worker-(\d+)\.log$/.exec(f)?.[1])
    .filter((p): p is string => p !== undefined)
    .map(Number)
  assert.ok(pids.length >= 2, `worker logs: ${pids}`)
  await waitFor(() => pids.every((p) => !isAlive(p)), 15_000, "the dead host's workers to exit")

  // The database is whole and every acknowledged block has its row.
  const store = openStore({ home })
  try {
    assert.deepEqual(store.integrityCheck(), ['ok'])
    for (const [sid, ids] of acknowledged) {
      assert.deepEqual(
        store.blocks.listBySession(sid).map((x) => x.id),
        ids,
        `every acknowledged block of ${sid}, in order`,
      )
    }
    assert.ok(store.defs.get(a), 'the defs snapshot of A was stored')
  } finally {
    store.close()
  }

  const second = await serve()
  call = client(second.url, second.auth)
  const listed = (await call('GET', '/v1/sessions')).body.sessions as { id: string; worker: string }[]
  assert.deepEqual(listed.map((s) => s.id).sort(), [a, b].sort())
  assert.ok(
    listed.every((s) => s.worker === 'dormant'),
    'no worker until the next block',
  )

  const blocksA = (await call('GET', `/v1/sessions/${a}`)).body.blocks
  assert.deepEqual(
    blocksA.map((x: { id: string }) => x.id),
    acknowledged.get(a),
  )
  assert.equal(blocksA[1].result, 41, 'a finished block keeps its outcome')
  for (const x of [...blocksA.slice(2), ...(await call('GET', `/v1/sessions/${b}`)).body.blocks.slice(1)]) {
    assert.equal(x.status, 'done')
    assert.equal(
      x.error.code,
      'block.abandoned',
      'blocks the dead host was running are closed, not left running',
    )
  }

  // The next block in a reopened session runs after its definitions are restored.
  const r1 = await call('POST', `/v1/sessions/${a}/blocks`, { code: 'inc(BASE) + 1' })
  assert.equal(r1.body.result, 42, JSON.stringify(r1.body.error))
  const r2 = await call('POST', `/v1/sessions/${b}/blocks`, { code: 'json.dumps(Point(7).x)' })
  assert.equal(r2.body.result, '7', JSON.stringify(r2.body.error))
  const all = await openEvents(`${second.url}/v1/sessions/${a}/events`, second.auth)
  await all.waitFor(finishedFor(r1.body.id))
  await all.close()
  const restored = all.events.find((e) => e.event === 'defs.restored')
  assert.ok(restored, 'a defs-restored event')
  assert.ok(restored.data.data.restored.includes('inc'))
  const ids = all.events.map((e) => e.id!)
  assert.deepEqual(
    ids,
    ids.map((_, i) => i + 1),
    'event ids stay monotonic across the restart',
  )
  const metrics = (await call('GET', '/metrics')).text
  assert.match(metrics, /^vis_worker_restarts_total 2$/m)

  second.child.kill('SIGTERM')
  assert.deepEqual(await exited(second.child), { code: 0, signal: null }, 'SIGTERM stops cleanly')

  // The CLI reads the same database.
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', vis, ...args], { env, encoding: 'utf8', timeout: 60_000 })
  const list = cli('sessions', 'list')
  assert.equal(list.status, 0, list.stderr)
  assert.match(list.stdout, new RegExp(a))
  assert.match(list.stdout, new RegExp(b))
  const show = cli('sessions', 'show', a)
  assert.equal(show.status, 0, show.stderr)
  assert.match(show.stdout, /error: block\.abandoned/)
  assert.match(show.stdout, /inc\(BASE\) \+ 1/)
  const json = cli('sessions', 'export', a, '--format', 'json')
  assert.equal(json.status, 0, json.stderr)
  const transcript = JSON.parse(json.stdout)
  assert.equal(transcript.format, 'vis-transcript')
  assert.equal(transcript.blocks.length, acknowledged.get(a)!.length + 1)
  const md = cli('sessions', 'export', a)
  assert.equal(md.status, 0, md.stderr)
  assert.match(md.stdout, /def inc\(x\)/)
  const missing = cli('sessions', 'show', 'nope')
  assert.equal(missing.status, 1)
  assert.match(missing.stderr, /No session with id nope/)
  const help = cli('sessions', '--help')
  assert.match(help.stdout, /vis sessions export <id> \[--format md\|json\]/)
  const serveHelp = cli('help', 'serve')
  assert.match(serveHelp.stdout, /VIS_TOKEN/)
})
