// `vis run`, `vis chat`, `vis sessions show` and `vis doctor` as a user runs them (child
// processes), against the provider double.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { agentChecks } from '../../src/agent/doctor.js'
import { treeHash } from '../drafts/helpers.js'
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
  assert.match(r.stderr, /\[done · 2 iterations · 200 in \/ 40 out tokens\]/)
  assert.deepEqual(double.requests.at(-2)!.body.messages[1], { role: 'user', content: 'why is add wrong?' })
  const id = /\[session (ses_\w+) · root /.exec(r.stderr)![1]!
  // The session is titled from the task and closed with its turn.
  assert.match(r.stderr, new RegExp(`\\[session ${id} closed · vis sessions show ${id}\\]`))
  const listed = await visCli(['sessions', 'list', '--json'], { cwd: root, home }).done
  const mine = JSON.parse(listed.stdout).sessions.find((s: { id: string }) => s.id === id)
  assert.equal(mine.title, 'why is add wrong?')
  assert.equal(mine.state, 'closed')

  const show = await visCli(['sessions', 'show', id], { cwd: root, home }).done
  assert.equal(show.code, 0, show.stderr)
  assert.match(show.stdout, /turns {4}1\n {2}turn 1 done {6}openai\/double-model {2}2 iterations/)
  assert.match(
    show.stdout,
    /prompt {2}why is add wrong\?\n {4}answer {2}add\(\) subtracts instead of adding\.\n {4}call {4}cat +[\d.]+ ms {2}args [0-9a-f]{12} \(\d+ B\) {2}\d+ B/,
  )
  const json = JSON.parse((await visCli(['sessions', 'show', id, '--json'], { cwd: root, home }).done).stdout)
  assert.equal(json.turns[0].journal[0].tool, 'cat')
})

test('vis run shows what the model saw: the value, a refused call, and a long print clipped where its copy is', async () => {
  const { home, root } = dirs()
  writeFileSync(join(root, 'secret.txt'), 'the code is 1234\n')
  writeFileSync(
    join(home, 'agent.json'),
    JSON.stringify({ approvals: { rules: [{ tool: 'cat', match: 'secret' }] } }),
  )
  double.script([
    { calls: [pyCall('6 * 7')] },
    { calls: [pyCall('r = await cat("secret.txt")')] },
    { calls: [pyCall('print("y" * 70_000)')] },
    { text: 'done looking' },
  ])
  // No terminal: approvals are denied by the auto-policy, and nobody is asked.
  const r = await visCli(['run', 'look around'], { cwd: root, home }).done
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /└─ output:\n→ 42\n/)
  assert.match(r.stderr, /\[refused: cat\("secret\.txt"\) denied by policy: auto-policy: deny\]/)
  assert.match(r.stderr, /\[output clipped as for the model: 4,465 of 70,001 characters not shown\]/)
  assert.equal((r.stdout.match(/y/g) ?? []).length < 65_600, true, 'the clipped part is not printed')
  // The model's copy was clipped at the same place.
  assert.match(
    JSON.stringify(double.requests.at(-1)!.body.messages),
    /stdout clipped: 4,465 of 70,001 characters/,
  )
  // The export carries the model's side too: its text, the answer, the usage, the refused call.
  const id = /\[session (ses_\w+) · root /.exec(r.stderr)![1]!
  const md = await visCli(['sessions', 'export', id], { cwd: root, home }).done
  assert.equal(md.code, 0, md.stderr)
  assert.match(
    md.stdout,
    /## Agent turns\n\n### Turn 1 · done · openai\/double-model\n\n4 iterations · 400 in \/ 80 out tokens/,
  )
  assert.match(md.stdout, /\*\*Task\*\*\n\n> look around/)
  // The arguments are the model's: in a code span, never markup (fourteenth outsider pass).
  assert.match(md.stdout, /- refused: `cat` `\["secret\.txt"\]` — denied by policy: auto-policy: deny/)
  assert.match(md.stdout, /\*\*Answer\*\*\n\n> done looking/)
  const json = JSON.parse(
    (await visCli(['sessions', 'export', id, '--format', 'json'], { cwd: root, home }).done).stdout,
  )
  assert.equal(json.agent.turns[0].answer, 'done looking')
  assert.equal(json.agent.turns[0].usage.input, 400)
  assert.equal(json.agent.turns[0].iterations.at(-1).text, 'done looking')
  assert.deepEqual(
    json.agent.approvals.map((a: { tool: string; status: string }) => [a.tool, a.status]),
    [['cat', 'denied']],
  )
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

test('vis run: an answer the output token limit cut is printed with a notice saying so', async () => {
  const { home, root } = dirs()
  double.script([{ text: 'The fix is to change line 3 of', maxTokens: true }])
  const ended = await visCli(['run', 'what is the fix?'], { cwd: root, home }).done
  assert.equal(ended.code, 0, ended.stderr)
  assert.equal(ended.stdout, 'The fix is to change line 3 of\n')
  assert.match(
    ended.stderr,
    /\[the reply reached the model's output token limit \(stop: length\) and is cut off\]\n/,
  )

  double.script([{ text: 'A whole answer.' }])
  const whole = await visCli(['run', 'again'], { cwd: root, home }).done
  assert.equal(whole.code, 0, whole.stderr)
  assert.doesNotMatch(whole.stderr, /token limit/)
})

test('vis run: Ctrl-C while the model streams its answer cancels the turn (exit 130), the half is no answer', async () => {
  const { home, root } = dirs()
  double.script([{ text: 'The first half of an answer, then silence', fault: { kind: 'stall-mid-stream' } }])
  const { child, r, done } = visCli(['run', 'explain'], { cwd: root, home })
  await until('part of the answer streams', () => r.stdout.includes('The first'), 120_000)
  child.kill('SIGINT')
  const ended = await done
  assert.equal(ended.code, 130, ended.stderr)
  assert.match(ended.stderr, /\[cancelled\]/)
  assert.doesNotMatch(ended.stderr, /\[done/)
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
    input: 'first question\n/peek secret.txt\ny\n/templates\n/usage\n/exit\n',
  }).done
  assert.equal(r.code, 0, r.stderr)
  // Each turn's summary counts its own iterations; /usage counts turns and iterations apart.
  assert.deepEqual(
    [...r.stderr.matchAll(/\[done · (\d+ iterations?)/g)].map((m) => m[1]),
    ['1 iteration', '2 iterations'],
  )
  assert.match(r.stdout, /› 2 turns · 3 iterations · 300 in/)
  assert.match(r.stdout, /hello there/)
  assert.match(r.stdout, /\? cat\("secret\.txt"\) needs approval \(the rule for cat matches \/secret\/\)/)
  assert.match(r.stdout, / {2}approved\n/)
  assert.match(r.stdout, /it says: 1:\w+\|the code is 1234/)
  assert.match(r.stdout, /\/peek/)
})

test('vis chat /draft: new, diff, apply, a conflict refused then abandoned, blank, bad input; the real root untouched until apply', async () => {
  const { home, root } = dirs()
  writeFileSync(join(root, 'calc.py'), 'def add(a, b):\n    return a - b\n')
  writeFileSync(join(root, 'old.txt'), 'to be deleted\n')
  const real = () => treeHash(root)
  const base = real()
  let inDraft: Record<string, string> | undefined
  let conflict: Record<string, string> | undefined
  double.script([
    {
      calls: [
        pyCall(
          'await write("calc.py", "def add(a, b):\\n    return a + b\\n")\n' +
            'await write("new.txt", "fresh\\n")\n' +
            'import os\nos.remove("old.txt")\nprint(sorted(os.listdir(".")))',
        ),
      ],
    },
    (req) => {
      // The block has run in the draft: the real root is byte-identical.
      inDraft = real()
      return { text: `done: ${req.body.messages.at(-1).content}` }
    },
    () => {
      // Someone edits the real calc.py after the second draft began.
      writeFileSync(join(root, 'calc.py'), 'def add(a, b):\n    return b + a  # real\n')
      conflict = real()
      return { calls: [pyCall('await write("calc.py", "# the draft\'s version\\n")')] }
    },
    { text: 'edited' },
    { calls: [pyCall('import os\nprint("blank view:", sorted(os.listdir(".")))')] },
    { text: 'nothing here' },
  ])
  const input = [
    '/draft',
    '/draft diff',
    '/draft abandon',
    '/draft new fix add',
    'fix add and tidy up',
    '/draft',
    '/draft diff',
    '/draft apply --theirs --ours',
    '/draft apply',
    '/draft apply',
    '/draft new second try',
    'edit calc again',
    '/draft apply',
    '/draft diff',
    '/draft apply',
    '/draft abandon the real file moved on',
    '/draft blank scratch',
    'what is here?',
    '/draft',
    '/draft new another',
    '/draft frobnicate',
    '/draft new',
    '/draft abandon',
    '/exit',
  ].join('\n')
  const r = await visCli(['chat'], { cwd: root, home, input: `${input}\n` }).done
  assert.equal(r.code, 0, r.stderr)
  const out = r.stdout

  // On the trunk: state, an empty diff, and nothing to abandon.
  assert.match(out, /this session works on the trunk\n/)
  assert.match(out, /no draft: this session works directly in its root \(the trunk\)\n/)
  assert.match(r.stderr, /✗ session ses_\w+ is on the trunk: there is no draft to abandon \[draft\.none\]/)

  // The first draft: the block saw and wrote the draft; the real root did not change.
  assert.ok(
    out.includes(`now in draft "fix add": a copy of ${root}; the real directory stays untouched`),
    out,
  )
  assert.match(out, /\['\.vis', 'calc\.py', 'new\.txt'\]/)
  assert.deepEqual(inDraft, base)
  assert.match(out, /this session works on the draft "fix add" \(copy, since \S+Z, 3 file\(s\) changed\)/)
  assert.match(
    out,
    /diff --git a\/calc\.py b\/calc\.py\n[\s\S]*- {4}return a - b\n\+ {4}return a \+ b\n[\s\S]*diff --git a\/new\.txt b\/new\.txt\nnew file mode 100644\n[\s\S]*\+fresh\n[\s\S]*diff --git a\/old\.txt b\/old\.txt\ndeleted file mode 100644\n/,
  )
  assert.match(
    r.stderr,
    /✗ \/draft apply: choose --theirs or --ours, not both\n[\s\S]*\[cli\.bad-draft-command\]/,
  )
  assert.match(out, /applied: 3 file\(s\) landed: calc\.py, new\.txt, old\.txt\nback on the trunk\n/)
  // A second apply is a no-op.
  assert.match(out, /back on the trunk\n› no draft to apply: this session is on the trunk\n/)

  // The second draft: an apply before its diff was shown is refused (what lands is what was reviewed).
  assert.match(
    r.stderr,
    /✗ \/draft apply lands what you reviewed: show it first with \/draft diff, then \/draft apply\n[\s\S]*\[cli\.bad-draft-command\]/,
  )
  // Then the real calc.py changed meanwhile, so apply refuses and names it.
  assert.match(
    r.stderr,
    /✗ these files changed in \S+ since draft "second try" began, or may have been deleted there: calc\.py\. Apply with theirs[^\n]*\[draft\.conflict\]/,
  )
  assert.match(out, /abandoned draft "second try" \(the real file moved on\); back on the trunk/)

  // A blank draft, then bad input, each refused with its own error.
  assert.ok(out.includes(`now in draft "scratch": an empty view of ${root}`), out)
  // A block in the blank draft sees only the (masked) extension directory.
  assert.match(out, /blank view: \['\.vis'\]\n/)
  assert.match(out, /this session works on the draft "scratch" \(blank, since \S+Z, \d+ file\(s\) changed\)/)
  assert.match(r.stderr, /is already in draft "scratch"; apply or abandon it first \[draft\.exists\]/)
  assert.match(
    r.stderr,
    /✗ unknown \/draft command "frobnicate"\n {2}\/draft {15}whether[\s\S]*\[cli\.bad-draft-command\]/,
  )
  assert.match(
    r.stderr,
    /✗ \/draft new needs a label, e\.g\. \/draft new try the refactor\n[\s\S]*\[cli\.bad-draft-command\]/,
  )
  assert.match(out, /abandoned draft "scratch"; back on the trunk/)
  // None of these lines reached the model.
  assert.equal(double.requests.filter((q) => JSON.stringify(q.body).includes('/draft')).length, 0)

  // The real root: the first draft's changes landed; the conflicting one kept the real edit.
  const after = real()
  assert.deepEqual(Object.keys(after).sort(), ['calc.py', 'new.txt'])
  assert.equal(readFileSync(join(root, 'calc.py'), 'utf8'), 'def add(a, b):\n    return b + a  # real\n')
  assert.equal(readFileSync(join(root, 'new.txt'), 'utf8'), 'fresh\n')
  assert.deepEqual(after, conflict)
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

test('vis sessions show draws the sub_loop tree: the parent turn lists its child turns with their usage, a child names its parent', async () => {
  const { home, root } = dirs()
  double.script([], (req) => {
    const b = JSON.stringify(req.body)
    if (b.includes('PARENT-TASK')) {
      if (b.includes('KIDS')) return { text: 'both helpers answered', usage: { input: 100, output: 10 } }
      return {
        calls: [
          pyCall('print("KI" + "DS", await gather(sub_loop("CHILD-ONE-TASK"), sub_loop("CHILD-TWO-TASK")))'),
        ],
        usage: { input: 100, output: 10 },
      }
    }
    const k = b.includes('CHILD-ONE-TASK') ? 'one' : 'two'
    return { text: `answer-${k}`, usage: { input: 7, output: 3 } }
  })
  const r = await visCli(['run', 'PARENT-TASK: ask two helpers'], { cwd: root, home }).done
  assert.equal(r.code, 0, r.stderr)
  const id = /\[session (ses_\w+) · root /.exec(r.stderr)![1]!

  const show = await visCli(['sessions', 'show', id], { cwd: root, home }).done
  assert.equal(show.code, 0, show.stderr)
  // The tree's usage: the parent's two requests and each child's one.
  assert.match(show.stdout, /\n {4}tree {4}2 child turn\(s\) · 214 in \/ 26 out tokens\n/)
  const kids = [
    ...show.stdout.matchAll(
      /\n {4}child {3}done {6}(ses_\w+) {2}(CHILD-\w+-TASK) → (answer-\w+) {2}1 iteration · 7 in \/ 3 out tokens/g,
    ),
  ]
  assert.deepEqual(kids.map((m) => [m[2], m[3]]).sort(), [
    ['CHILD-ONE-TASK', 'answer-one'],
    ['CHILD-TWO-TASK', 'answer-two'],
  ])
  const json = JSON.parse((await visCli(['sessions', 'show', id, '--json'], { cwd: root, home }).done).stdout)
  const parent = json.turns[0]
  assert.equal(parent.child_turns.length, 2)
  assert.deepEqual(parent.tree_usage.input, 214)
  const blockId = parent.iterations[0].block_ids[0]

  // A child's own session names where it came from.
  const child = await visCli(['sessions', 'show', kids[0]![1]!], { cwd: root, home }).done
  assert.equal(child.code, 0, child.stderr)
  assert.match(child.stdout, new RegExp(`\\n {4}parent {2}${id} turn ${parent.id} block ${blockId}\\n`))
})
