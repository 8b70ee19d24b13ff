// The session modes (issue 32) as a person uses them: `vis run --read-only`, agent.json's
// default mode, and `vis run --review` with --apply / --no-apply, each a real vis process
// against the provider double, its blocks run in a real jailed worker on real files.
import assert from 'node:assert/strict'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { pyCall } from '../agent/double.js'
import { cliWithDouble } from './cli-double.js'

const cli = cliWithDouble('modes')
const { visCli, dirs } = cli

// A model that edits notes.txt from Python and with the write tool, and makes a new file.
const EDITING_MODEL = [
  {
    calls: [
      pyCall(
        `try:
    open('notes.txt', 'w').write('from python\\n')
    print('python wrote')
except PermissionError as e:
    print('python refused:', e)
try:
    await write('made.txt', 'from the tool\\n')
    print('tool wrote')
except Exception as e:
    print('tool refused:', e.code)`,
      ),
    ],
  },
  { text: 'Edited.' },
]

test('vis run --read-only: the block and the write tool are refused, the root unchanged', async () => {
  const { home, root } = dirs()
  cli.double.script(EDITING_MODEL)
  const r = await visCli(['run', '--read-only', 'edit the notes'], { cwd: root, home })
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stderr, /\[session ses_\w+ · root .* · read-only\]/)
  assert.match(r.stdout, /python refused: vis: writing 'notes\.txt' .*the session is read-only/)
  assert.match(r.stdout, /tool refused: tool\.session-read-only/)
  assert.equal(readFileSync(join(root, 'notes.txt'), 'utf8'), 'original\n')
  assert.equal(existsSync(join(root, 'made.txt')), false)
})

test("agent.json's mode is the default; --mode workspace overrides it", async () => {
  const { home, root } = dirs()
  writeFileSync(join(home, 'agent.json'), JSON.stringify({ mode: 'read-only' }))
  cli.double.script(EDITING_MODEL)
  const ro = await visCli(['run', 'edit the notes'], { cwd: root, home })
  assert.equal(ro.code, 0, ro.stderr)
  assert.match(ro.stdout, /python refused: .*the session is read-only/)
  assert.equal(readFileSync(join(root, 'notes.txt'), 'utf8'), 'original\n')

  cli.double.script(EDITING_MODEL)
  const rw = await visCli(['run', '--mode', 'workspace', 'edit the notes'], { cwd: root, home })
  assert.equal(rw.code, 0, rw.stderr)
  assert.match(rw.stdout, /python wrote\ntool wrote/)
  assert.equal(readFileSync(join(root, 'notes.txt'), 'utf8'), 'from python\n')
  assert.equal(readFileSync(join(root, 'made.txt'), 'utf8'), 'from the tool\n')
})

test('conflicting modes are a usage error', async () => {
  const { home, root } = dirs()
  const r = await visCli(['run', '--read-only', '--review', 'x'], { cwd: root, home })
  assert.equal(r.code, 2, r.stderr)
  assert.match(r.stderr, /choose one mode: read-only and review/)
  const bad = await visCli(['run', '--mode', 'yolo', 'x'], { cwd: root, home })
  assert.equal(bad.code, 2, bad.stderr)
  assert.match(bad.stderr, /--mode must be workspace, read-only, review, not yolo/)
})

test('vis run --review --apply: the turn writes a draft, the diff is shown, then it lands', async () => {
  const { home, root } = dirs()
  cli.double.script(EDITING_MODEL)
  const r = await visCli(['run', '--review', '--apply', 'edit the notes'], { cwd: root, home })
  assert.equal(r.code, 0, r.stderr)
  // Inside the turn the draft took the writes, the real root had none of them yet.
  assert.match(r.stdout, /python wrote\ntool wrote/)
  assert.match(r.stdout, /\[review: the turn's changes to .*\]\n/)
  assert.match(r.stdout, /-original\n\+from python/)
  assert.match(r.stdout, /\+from the tool/)
  assert.match(r.stdout, /\[review: applied 2 file\(s\): /)
  assert.equal(readFileSync(join(root, 'notes.txt'), 'utf8'), 'from python\n')
  assert.equal(readFileSync(join(root, 'made.txt'), 'utf8'), 'from the tool\n')
})

test('vis run --review --no-apply, or with nobody to ask: the diff is shown and nothing lands', async () => {
  for (const flags of [['--no-apply'], []]) {
    const { home, root } = dirs()
    cli.double.script(EDITING_MODEL)
    const r = await visCli(['run', '--review', ...flags, 'edit the notes'], { cwd: root, home })
    assert.equal(r.code, 0, r.stderr)
    assert.match(r.stdout, /python wrote\ntool wrote/)
    assert.match(r.stdout, /-original\n\+from python/)
    assert.match(
      r.stdout,
      flags.length ? /\[review: not applied \(--no-apply\)/ : /\[review: not applied \(no terminal to ask/,
    )
    assert.equal(readFileSync(join(root, 'notes.txt'), 'utf8'), 'original\n')
    assert.equal(existsSync(join(root, 'made.txt')), false)
  }
})

test('--apply without --review is a usage error', async () => {
  const { home, root } = dirs()
  // Refused before any turn: the model is never asked.
  const r = await visCli(['run', '--apply', 'x'], { cwd: root, home })
  assert.equal(r.code, 2, r.stderr)
  assert.match(r.stderr, /--apply and --no-apply go with --review/)
  assert.equal(readFileSync(join(root, 'notes.txt'), 'utf8'), 'original\n')
})

test('vis chat --review: each turn is shown as a diff and lands only on a yes', async () => {
  const { home, root } = dirs()
  const second = [{ calls: [pyCall("await write('second.txt', 'turn two\\n')")] }, { text: 'Made it.' }]
  cli.double.script([...EDITING_MODEL, ...second])
  // First turn answered yes, second no.
  const r = await visCli(['chat', '--review'], {
    cwd: root,
    home,
    input: 'edit the notes\ny\nmake a second file\nn\n/exit\n',
  })
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /vis chat · session ses_\w+ · review ·/)
  assert.match(r.stdout, /-original\n\+from python/)
  assert.match(r.stdout, /\[review: applied 2 file\(s\)/)
  assert.match(r.stdout, /\+turn two/)
  assert.match(r.stdout, /\[review: not applied \(not approved at the prompt\)/)
  assert.equal(readFileSync(join(root, 'notes.txt'), 'utf8'), 'from python\n')
  assert.equal(readFileSync(join(root, 'made.txt'), 'utf8'), 'from the tool\n')
  assert.equal(existsSync(join(root, 'second.txt')), false)
})

// ATTACK (issue 30, fourth pass): `--approve approve` (agent.json's approvals.auto "approve")
// approved everything, including the calls a read-only session requires a person's approval for
// (an MCP server's tools run on the host, outside the jail). A mode's approval goes to a person:
// without a terminal nobody can answer and the call is refused; in vis chat it is asked.
const repoRoot = join(import.meta.dirname, '..', '..')
function withMcpServer(home: string) {
  const server = join(repoRoot, 'test', 'mcp', 'fixtures', 'stdio-server.ts')
  const fx = { command: process.execPath, args: ['--import', import.meta.resolve('tsx'), server, 'fx'] }
  writeFileSync(join(home, 'mcp.json'), JSON.stringify({ servers: { fx } }))
}
const MCP_MODEL = [
  {
    calls: [
      pyCall(`try:
    print('mcp answered:', await mcp_fx_echo(text='hi'))
except Exception as e:
    print('mcp refused:', e.code, e)`),
    ],
  },
  { text: 'Called.' },
]

test('--approve approve does not approve what --read-only requires: refused with nobody to ask', async () => {
  const { home, root } = dirs()
  withMcpServer(home)
  cli.double.script(MCP_MODEL)
  const r = await visCli(['run', '--read-only', '--approve', 'approve', 'call the server'], {
    cwd: root,
    home,
  })
  assert.equal(r.code, 0, r.stderr)
  assert.match(
    r.stdout,
    /mcp refused: tool\.denied (mcp_fx_echo: )+the call was denied by policy: the session's mode requires a person's approval and nobody can answer here/,
  )
  assert.doesNotMatch(r.stdout, /^mcp answered/m)

  // The control: a workspace session's MCP tools need no approval, so the same call runs.
  cli.double.script(MCP_MODEL)
  const ws = await visCli(['run', '--approve', 'approve', 'call the server'], { cwd: root, home })
  assert.equal(ws.code, 0, ws.stderr)
  assert.match(ws.stdout, /^mcp answered: fx:hi/m)
})

test("vis chat --read-only --approve approve: the mode's approval is asked, and the answer decides", async () => {
  const { home, root } = dirs()
  withMcpServer(home)
  cli.double.script([...MCP_MODEL, ...MCP_MODEL])
  const r = await visCli(['chat', '--read-only', '--approve', 'approve'], {
    cwd: root,
    home,
    input: 'call the server\nn\ncall it again\ny\n/exit\n',
  })
  assert.equal(r.code, 0, r.stderr)
  const asked =
    r.stdout.match(/\? mcp_fx_echo\(.*\) needs approval \(mcp_fx_echo runs outside the jail/g) ?? []
  assert.equal(asked.length, 2, r.stdout)
  assert.match(r.stdout, /mcp refused: tool\.denied (mcp_fx_echo: )+the call was denied by terminal/)
  assert.match(r.stdout, /^mcp answered: fx:hi/m)
})

test('--session with another mode than the stored one is refused; the same mode passes', async () => {
  const { home, root } = dirs()
  cli.double.script(EDITING_MODEL)
  const first = await visCli(['run', '--read-only', 'edit the notes'], { cwd: root, home })
  assert.equal(first.code, 0, first.stderr)
  const id = /\[session (ses_\w+) /.exec(first.stderr)![1]!
  const asked = cli.double.requests.length
  for (const flags of [['--mode', 'workspace'], ['--review']]) {
    const r = await visCli(['run', '--session', id, ...flags, 'edit the notes'], { cwd: root, home })
    assert.equal(r.code, 2, r.stderr)
    assert.match(
      r.stderr,
      new RegExp(
        `session ${id} is in mode read-only, not (workspace|review): a session keeps the mode it was made with.*\\[cli\\.session-mode-mismatch\\]`,
      ),
    )
  }
  // Refused before any turn: the model was never asked, the root is as it was.
  assert.equal(cli.double.requests.length, asked)
  assert.equal(readFileSync(join(root, 'notes.txt'), 'utf8'), 'original\n')

  // The same mode passes the check (vis run closed that session with its turn, so continuing it
  // ends at the next rule, session.closed).
  const same = await visCli(['run', '--session', id, '--read-only', 'edit the notes'], { cwd: root, home })
  assert.doesNotMatch(same.stderr, /cli\.session-mode-mismatch|a session keeps the mode/)
  assert.match(same.stderr, /is closed; create a new session\. \[session\.closed\]/)
  assert.equal(cli.double.requests.length, asked)
})
