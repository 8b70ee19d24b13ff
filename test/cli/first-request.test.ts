// `vis run` sends its first model request while its session starts (issue 32 §2): real vis
// processes against the provider double, real workers, a real vis home and its prompt cache.
// VIS_TEST_HOLD_SESSION_START (test-only, src/cli/agent/first-request.ts) keeps the CLI from
// loading the engine until the test creates a file, which it does only once the first request
// has arrived: an early request arrives while no session exists, every time.
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, test } from 'node:test'
import Database from 'better-sqlite3'
import { ProviderDouble, type Recorded } from '../agent/double.js'

const vis = join(import.meta.dirname, '..', 'http', 'fixtures', 'vis.ts')
const tsx = import.meta.resolve('tsx')
// One double a test: a test that fails leaves no scripted reply behind for the next.
let double: ProviderDouble
beforeEach(async () => {
  double = await new ProviderDouble().start()
})
afterEach(async () => {
  await double.close()
})

type Run = { child: ChildProcess; stdout: string; stderr: string; done: Promise<number | null> }
function visRun(task: string, o: { cwd: string; home: string; hold?: string }): Run {
  const child = spawn(process.execPath, ['--import', tsx, vis, 'run', task], {
    cwd: o.cwd,
    env: {
      ...process.env,
      VIS_HOME: o.home,
      VIS_MODEL: 'openai/double-model',
      OPENAI_BASE_URL: double.openaiURL,
      OPENAI_API_KEY: 'sk-cli',
      ...(o.hold ? { VIS_TEST_HOLD_SESSION_START: o.hold } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const r: Run = { child, stdout: '', stderr: '', done: Promise.resolve(null) }
  child.stdout!.on('data', (d) => {
    r.stdout += d
  })
  child.stderr!.on('data', (d) => {
    r.stderr += d
  })
  r.done = new Promise((resolve) => child.on('close', resolve))
  return r
}

const systemOf = (req: Recorded): string => req.body.messages[0].content
const SESSION_LINE = /\[session ses_\w+ · root /

// The sessions stored in the home, read by another process as any reader would. A run stores
// its session before it runs any turn: counted when a request arrives, it says whether the
// request came before or after the session.
function sessionsIn(home: string): number {
  const db = new Database(join(home, 'vis.db'), { readonly: true, fileMustExist: true })
  try {
    return (db.prepare('SELECT count(*) AS n FROM sessions').get() as { n: number }).n
  } finally {
    db.close()
  }
}

function dirs(agents = 'Rule: be brief.\n') {
  const home = mkdtempSync(join(tmpdir(), 'vis-first-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-first-root-'))
  writeFileSync(join(root, 'AGENTS.md'), agents)
  return { home, root }
}

// The first run on a fresh home: no cache, the request after the session; it leaves the cache.
async function firstRun(home: string, root: string): Promise<Recorded> {
  const from = double.requests.length
  double.script([{ text: 'first run' }])
  const r = visRun('say ok', { cwd: root, home })
  assert.equal(await r.done, 0, r.stderr)
  assert.equal(double.requests.length, from + 1)
  assert.equal(readdirSync(join(home, 'cache', 'first-prompt')).length, 1)
  return double.requests[from]!
}

// A run whose first request is answered `answers` in turn; `seen` records, at the request's
// arrival, whether the run's session was stored yet, then lets the CLI go on.
function heldRun(home: string, root: string, answers: string[]) {
  const hold = join(home, 'go')
  const seen: { sessionBefore?: boolean } = {}
  const stored = sessionsIn(home)
  const r = visRun('say ok', { cwd: root, home, hold })
  const [firstText, ...rest] = answers
  double.script([
    () => {
      seen.sessionBefore = sessionsIn(home) > stored
      writeFileSync(hold, '')
      return { text: firstText! }
    },
    ...rest.map((text) => ({ text })),
  ])
  return { r, seen }
}

test('on a home that has run once, the first request is sent before the session starts, and used', async () => {
  const { home, root } = dirs()
  const before = await firstRun(home, root)
  const from = double.requests.length
  const { r, seen } = heldRun(home, root, ['early answer'])
  assert.equal(await r.done, 0, r.stderr)
  // It arrived while the CLI had no session; the session came after it.
  assert.equal(seen.sessionBefore, false)
  assert.match(r.stderr, SESSION_LINE)
  // One request: the turn took the early reply, the model was not asked again.
  assert.equal(double.requests.length, from + 1)
  assert.equal(systemOf(double.requests[from]!), systemOf(before))
  assert.match(r.stdout, /early answer/)
  assert.doesNotMatch(r.stderr, /first request:/)
})

test('AGENTS.md edited since the cache was made: the first request carries the new text', async () => {
  const { home, root } = dirs('Rule: alpha.\n')
  const before = await firstRun(home, root)
  assert.match(systemOf(before), /Rule: alpha\./)
  writeFileSync(join(root, 'AGENTS.md'), 'Rule: beta.\n')
  const from = double.requests.length
  const { r, seen } = heldRun(home, root, ['beta answer'])
  assert.equal(await r.done, 0, r.stderr)
  assert.equal(seen.sessionBefore, false)
  const sent = systemOf(double.requests[from]!)
  assert.match(sent, /Rule: beta\./)
  assert.doesNotMatch(sent, /alpha/)
  // The session's own prompt agreed: no second request.
  assert.equal(double.requests.length, from + 1)
  assert.match(r.stdout, /beta answer/)
})

test('a cache that no longer matches the session: the early reply is dropped and the model asked again', async () => {
  const { home, root } = dirs()
  const before = await firstRun(home, root)
  // As if a tool had changed where the stamps cannot see it (an MCP server's tool list).
  const dir = join(home, 'cache', 'first-prompt')
  const file = join(dir, readdirSync(dir)[0]!)
  const cached = JSON.parse(readFileSync(file, 'utf8'))
  cached.parts.tools.push({
    name: 'vanished_tool',
    doc: 'A tool the session no longer has.',
    signature: '()',
  })
  writeFileSync(file, JSON.stringify(cached))
  const from = double.requests.length
  const { r, seen } = heldRun(home, root, ['stale answer', 'fresh answer'])
  assert.equal(await r.done, 0, r.stderr)
  assert.equal(seen.sessionBefore, false)
  assert.match(systemOf(double.requests[from]!), /vanished_tool/)
  // Asked again with the session's prompt; the answer is that request's.
  assert.equal(double.requests.length, from + 2)
  assert.equal(systemOf(double.requests[from + 1]!), systemOf(before))
  assert.match(r.stderr, /first request: the session's prompt differs from the cached one/)
  assert.match(r.stdout, /fresh answer/)
  assert.doesNotMatch(r.stdout, /stale answer/)
  // And the cache was refreshed from the session.
  assert.doesNotMatch(readFileSync(file, 'utf8'), /vanished_tool/)
})

test('a changed input (agent.json) invalidates the cache: nothing is sent before the session', async () => {
  const { home, root } = dirs()
  await firstRun(home, root)
  writeFileSync(join(home, 'agent.json'), JSON.stringify({ maxIterations: 7 }))
  const hold = join(home, 'go')
  writeFileSync(hold, '')
  const from = double.requests.length
  const stored = sessionsIn(home)
  const r = visRun('say ok', { cwd: root, home, hold })
  let sessionBefore: boolean | undefined
  double.script([
    () => {
      sessionBefore = sessionsIn(home) > stored
      return { text: 'late answer' }
    },
  ])
  assert.equal(await r.done, 0, r.stderr)
  assert.equal(sessionBefore, true)
  assert.equal(double.requests.length, from + 1)
  assert.match(r.stdout, /late answer/)
})
