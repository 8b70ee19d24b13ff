// `vis run`, `vis chat`, `vis sessions show` and `vis doctor` as a user runs them (child
// processes), against the provider double.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { agentChecks } from '../../src/agent/doctor.js'
import { ProviderDouble, pyCall } from './double.js'
import { until } from './harness.js'

const vis = join(import.meta.dirname, '..', 'http', 'fixtures', 'vis.ts')
// The CLI runs in a temporary directory: tsx is found from here, not from there.
const tsx = import.meta.resolve('tsx')
let double: ProviderDouble
before(async () => {
  double = await new ProviderDouble().start()
})
after(async () => {
  await double.close()
})

type Run = { code: number | null; stdout: string; stderr: string }
function visCli(
  args: string[],
  opts: { cwd: string; home: string; input?: string; env?: Record<string, string> },
) {
  const child = spawn(process.execPath, ['--import', tsx, vis, ...args], {
    cwd: opts.cwd,
    env: {
      ...process.env,
      VIS_HOME: opts.home,
      VIS_MODEL: 'openai/double-model',
      OPENAI_BASE_URL: double.openaiURL,
      OPENAI_API_KEY: 'sk-cli',
      ...opts.env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  const r: Run = { code: null, stdout: '', stderr: '' }
  child.stdout.on('data', (d) => {
    r.stdout += d
  })
  child.stderr.on('data', (d) => {
    r.stderr += d
  })
  if (opts.input !== undefined) child.stdin.end(opts.input)
  const done = new Promise<Run>((resolve) =>
    child.on('close', (code) => {
      r.code = code
      resolve(r)
    }),
  )
  return { child, r, done }
}

const dirs = () => ({
  home: mkdtempSync(join(tmpdir(), 'vis-agent-cli-home-')),
  root: mkdtempSync(join(tmpdir(), 'vis-agent-cli-root-')),
})

test('vis run streams the text, each block with its output, and the answer; sessions show lists the turn and its calls', async () => {
  const { home, root } = dirs()
  writeFileSync(join(root, 'calc.py'), 'def add(a, b):\n    return a - b\n')
  double.script([
    { text: 'Looking.', calls: [pyCall('r = await cat("calc.py")\nprint(r["content"])')] },
    { text: 'add() subtracts instead of adding.' },
  ])
  const { done } = visCli(['run', 'why', 'is', 'add', 'wrong?'], { cwd: root, home })
  const r = await done
  assert.equal(r.code, 0, r.stderr)
  assert.match(
    r.stdout,
    /^Looking\.\n┌─ python\n│ r = await cat\("calc\.py"\)\n│ print\(r\["content"\]\)\n└─ output:\n1:\w+\|def add\(a, b\):\n2:\w+\| {4}return a - b\nadd\(\) subtracts instead of adding\.\n$/,
  )
  assert.match(r.stderr, /\[done · 2 iteration\(s\) · 200 in \/ 40 out tokens\]/)
  assert.deepEqual(double.requests.at(-2)!.body.messages[1], { role: 'user', content: 'why is add wrong?' })
  const id = /\[session (ses_\w+) · root /.exec(r.stderr)![1]!

  const show = await visCli(['sessions', 'show', id], { cwd: root, home }).done
  assert.equal(show.code, 0, show.stderr)
  assert.match(show.stdout, /turns {4}1\n {2}turn 1 done {6}openai\/double-model {2}2 iteration\(s\)/)
  assert.match(
    show.stdout,
    /prompt {2}why is add wrong\?\n {4}answer {2}add\(\) subtracts instead of adding\.\n {4}call {4}cat +[\d.]+ ms {2}args [0-9a-f]{12} \(\d+ B\) {2}\d+ B/,
  )
  const json = JSON.parse((await visCli(['sessions', 'show', id, '--json'], { cwd: root, home }).done).stdout)
  assert.equal(json.turns[0].journal[0].tool, 'cat')
})

test('vis run: Ctrl-C cancels the turn (exit 130); no model is a clear error', async () => {
  const { home, root } = dirs()
  double.script([
    { calls: [pyCall('import time\nprint("working", flush=True)\nwhile True:\n    time.sleep(0.05)')] },
  ])
  const { child, r, done } = visCli(['run', 'spin'], { cwd: root, home })
  await until('the block prints', () => r.stdout.includes('working'), 120_000)
  child.kill('SIGINT')
  const ended = await done
  assert.equal(ended.code, 130, ended.stderr)
  assert.match(ended.stderr, /\[cancelled\]/)

  const none = await visCli(['run', 'hi'], { cwd: root, home, env: { VIS_MODEL: '' } }).done
  assert.equal(none.code, 1)
  assert.match(none.stderr, /No model configured: set VIS_MODEL=<provider>\/<model>.*\[agent\.no-model\]/)
})

test('vis chat: turns share the session, approvals are asked on the terminal, /templates lists', async () => {
  const { home, root } = dirs()
  writeFileSync(join(root, 'secret.txt'), 'the code is 1234\n')
  writeFileSync(
    join(home, 'agent.json'),
    JSON.stringify({ approvals: { rules: [{ tool: 'cat', match: 'secret' }] } }),
  )
  const { mkdirSync } = await import('node:fs')
  mkdirSync(join(root, '.vis', 'prompts'), { recursive: true })
  writeFileSync(join(root, '.vis', 'prompts', 'peek.md'), 'Read $ARGUMENTS and tell me what it says.')
  double.script([
    { text: 'hello there' },
    (req) => {
      // The second turn carries the first in its history.
      assert.deepEqual(req.body.messages.slice(1, 3), [
        { role: 'user', content: 'first question' },
        { role: 'assistant', content: 'hello there' },
      ])
      assert.deepEqual(req.body.messages.at(-1), {
        role: 'user',
        content: 'Read secret.txt and tell me what it says.',
      })
      return { calls: [pyCall('r = await cat("secret.txt")\nprint(r["content"])')] }
    },
    (req) => ({ text: `it says: ${req.body.messages.at(-1).content}` }),
  ])
  const r = await visCli(['chat'], {
    cwd: root,
    home,
    input: 'first question\n/peek secret.txt\ny\n/templates\n/exit\n',
  }).done
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /hello there/)
  assert.match(r.stdout, /\? cat\("secret\.txt"\) needs approval \(the rule for cat matches \/secret\/\)/)
  assert.match(r.stdout, / {2}approved\n/)
  assert.match(r.stdout, /it says: 1:\w+\|the code is 1234/)
  assert.match(r.stdout, /\/peek/)
})

test('vis doctor reports the configured model and whether it answers', async () => {
  const { home, root } = dirs()
  const r = await visCli(['doctor', '--json'], { cwd: root, home }).done
  const check = JSON.parse(r.stdout).checks.find((c: { id: string }) => c.id === 'agent-model')
  assert.deepEqual(check, {
    id: 'agent-model',
    level: 'info',
    message: `openai/double-model at ${double.openaiURL}: answers; model double-model is listed`,
  })
  // In process: a dead endpoint is a warning that says so.
  const saved = { ...process.env }
  try {
    process.env.VIS_HOME = home
    process.env.VIS_MODEL = 'vllm/some-model'
    const [dead] = await agentChecks(2000)
    assert.equal(dead?.level, 'warn')
    assert.match(dead!.message, /^vllm\/some-model at http:\/\/127\.0\.0\.1:8000\/v1 does not answer: /)
    delete process.env.VIS_MODEL
    const [none] = await agentChecks(2000)
    assert.equal(none?.level, 'info')
    assert.match(none!.message, /No model configured/)
  } finally {
    process.env = saved
  }
})
