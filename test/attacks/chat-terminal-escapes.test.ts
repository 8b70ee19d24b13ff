// ATTACK, the `vis chat` side of sessions-show-terminal-escapes.test.ts (SECURITY.md "Session
// modes": "What the terminal shows is what lands"). Besides the turn printer, `vis chat` prints
// names from the root, which the sandbox writes: `/templates` lists the file names under
// .vis/prompts, and a `✗` line names what an error is about (a draft conflict its files). A block
// names a file `x ESC[2K CR.py`: raw, the terminal would erase the line that names the
// conflicting file; it is shown instead (src/cli/agent/visible.ts), still naming it. A template
// file `a ESC]0;pwned BEL.md` is no template (names are [A-Za-z0-9_.-]): never listed.
// On the code before: the ✗ line carried ESC and CR raw.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { ProviderDouble, pyCall } from '../agent/double.js'

const vis = join(import.meta.dirname, '..', 'http', 'fixtures', 'vis.ts')
const tsx = import.meta.resolve('tsx')
const made: string[] = []
let double: ProviderDouble
before(async () => {
  double = await new ProviderDouble().start()
})
after(async () => {
  await double.close()
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

const rawControls = (s: string) =>
  [...s]
    .filter((ch) => {
      const c = ch.charCodeAt(0)
      return (c < 0x20 && ch !== '\n' && ch !== '\t') || c === 0x7f || (c >= 0x80 && c < 0xa0)
    })
    .map((ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`)

function chat(
  cwd: string,
  home: string,
  input: string,
): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, ['--import', tsx, vis, 'chat'], {
    cwd,
    env: {
      ...process.env,
      VIS_HOME: home,
      VIS_MODEL: 'openai/double-model',
      OPENAI_BASE_URL: double.openaiURL,
      OPENAI_API_KEY: 'sk-cli',
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => {
    out += d
  })
  child.stderr.on('data', (d) => {
    err += d
  })
  child.stdin.end(input)
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })))
}

test('vis chat shows, not sends, the control characters of template names and of a ✗ line naming files', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-chat-esc-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-chat-esc-root-'))
  made.push(home, root)
  // Names a block of this root made earlier (the sandbox writes its root).
  mkdirSync(join(root, '.vis', 'prompts'), { recursive: true })
  writeFileSync(join(root, '.vis', 'prompts', 'a\x1b]0;pwned\x07.md'), 'Say $ARGUMENTS.')
  writeFileSync(join(root, '.vis', 'prompts', 'greet.md'), 'Say hello to $ARGUMENTS.')
  const named = 'x\x1b[2K\r.py'
  writeFileSync(join(root, named), 'v1\n')
  double.script([
    () => {
      // The draft began: the real file moves on, so applying the draft's edit conflicts.
      writeFileSync(join(root, named), 'v2, edited by a person\n')
      return { calls: [pyCall(`open('x\\x1b[2K\\r.py', 'w').write('the draft\\n')`)] }
    },
    { text: 'edited' },
  ])
  const r = await chat(
    root,
    home,
    [
      '/templates',
      '/draft new try',
      'edit it',
      '/draft diff',
      '/draft apply',
      '/draft abandon',
      '/exit',
      '',
    ].join('\n'),
  )
  assert.equal(r.code, 0, r.err)
  // A template is named by letters, digits and _.- only (templates.ts NAME): a file named
  // otherwise is no template, so /templates never lists it; a template is listed.
  assert.match(r.out, /› \/greet\n/)
  // The conflicting file is still named, as the person can read it.
  assert.match(r.err, /✗ these files changed in [\s\S]* x\^\[\[2K\\r\.py[\s\S]*\[draft\.conflict\]/)
  assert.deepEqual(rawControls(r.out), [], `stdout: ${JSON.stringify(r.out)}`)
  assert.deepEqual(rawControls(r.err), [], `stderr: ${JSON.stringify(r.err)}`)
})
