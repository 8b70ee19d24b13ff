// Attack (seventeenth outsider pass; surface: the args judgement, src/mcp-client/judge-word.ts judgeWord
// and env-spellings.ts expansions). A `$NAME` in an argument is read with NAME's value from the
// environment the server gets (the transport's defaults and mcp.json's env) or, when the server will not
// have NAME, as unset: kept as written and empty. But a server started through a login shell (`bash -lc`,
// the way mcp.json guides get the person's PATH for nvm) has more variables than that: the ones its
// ~/.profile (or ~/.bash_profile) exports, read by the shell before it runs the argument. A person's
// profile that exports where their projects are (`export WORK=$HOME/work`) gives `$WORK` a value the
// judgement never sees: `bash -lc '. "$WORK/mcp/env.sh" && exec node ...'` is read as `/mcp/env.sh` and
// `<cwd>/$WORK/mcp/env.sh`, both outside every root, while bash sources W/mcp/env.sh, which the block wrote.
//
// Reproduction: HOME=H with H/.profile exporting WORK=$HOME/work (a plain file, outside the root); a
// session on W=H/work. Servers `control` (args -lc '. H/work/mcp/env.sh; sleep 3', the same file named
// literally) and `profile` (args -lc '. "$WORK/mcp/env.sh"; sleep 3'). The block writes W/mcp/env.sh
// (appends to a marker outside W) and connects both. Expected: both refused with mcp.launch-denied (or
// the profile's variables read); the marker never written. A second test: `$PWD`, which the shell sets to
// mcp.json's cwd (above a root), read as unset too.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { connectEach, runEngine, type Server } from './outsider14-run.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-mcp-login-profile-var-'))
const hostHome = process.env.HOME
after(() => {
  process.env.HOME = hostHome
  rmSync(base, { recursive: true, force: true })
})

test("a $NAME a login shell's ~/.profile exports, naming a root, is judged in a bash -lc argument", () => {
  const H = join(base, 'home')
  const W = join(H, 'work')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [H, W, home, outside]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  // The person's profile: where their projects are. Outside the root, no link.
  writeFileSync(join(H, '.profile'), 'export WORK="$HOME/work"\n')
  process.env.HOME = H
  const hook = `echo "W/mcp/env.sh, written by the block, sourced on the host by the server's login shell through \\$WORK" >> ${JSON.stringify(marker)}\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      control: {
        command: '/bin/bash',
        args: ['-lc', `. ${W}/mcp/env.sh; sleep 3`],
        env: {},
        timeout_ms: 6_000,
      },
      profile: {
        command: '/bin/bash',
        args: ['-lc', '. "$WORK/mcp/env.sh"; sleep 3'],
        env: {},
        timeout_ms: 6_000,
      },
    },
    [
      'import os',
      `W = ${JSON.stringify(W)}`,
      "os.makedirs(W + '/mcp', exist_ok=True)",
      `open(W + '/mcp/env.sh', 'w').write(${JSON.stringify(hook)})`,
      "print('planted')",
      ...connectEach(['control', 'profile']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `the literal W/mcp/env.sh is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    'args \'. "$WORK/mcp/env.sh"\' passed the launch check ($WORK read as unset: the judgement does not know ' +
      "what the login shell's ~/.profile exports) and the host's bash sourced the block's file: " +
      `${existsSync(marker) ? readFileSync(marker, 'utf8').split('\n')[0] : ''} (${out.slice(0, 500)})`,
  )
  assert.match(out, /profile refused mcp\.launch-denied/, out)
})

// A variable the shell sets itself: bash (any POSIX shell) sets PWD to its working directory at start,
// which is mcp.json's `cwd`. The judgement knows the cwd but reads `$PWD` as a variable the server will not
// have, so `. "$PWD/notes/env.sh"` with the cwd above a root `notes` is read as `/notes/env.sh`.
test('$PWD (set by the shell to the cwd) naming a root is judged in a bash -c argument', () => {
  const P = join(base, 'projects')
  const W = join(P, 'notes')
  const home = join(base, 'vis-home2')
  const outside = join(base, 'outside2')
  for (const d of [P, W, home, outside]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  process.env.HOME = hostHome
  const hook = `echo "W/env.sh, written by the block, sourced on the host by the server's shell through \\$PWD" >> ${JSON.stringify(marker)}\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      pwd: {
        command: '/bin/bash',
        args: ['-c', '. "$PWD/notes/env.sh"; sleep 3'],
        env: {},
        timeout_ms: 6_000,
        cwd: P,
      } as Server,
    },
    [
      `W = ${JSON.stringify(W)}`,
      `open(W + '/env.sh', 'w').write(${JSON.stringify(hook)})`,
      "print('planted')",
      ...connectEach(['pwd']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.ok(
    !existsSync(marker),
    `args '. "$PWD/notes/env.sh"' with cwd ${P} passed the launch check ($PWD read as unset, not as the cwd the ` +
      `shell sets it to) and the host's bash sourced the block's file: ` +
      `${existsSync(marker) ? readFileSync(marker, 'utf8').split('\n')[0] : ''} (${out.slice(0, 500)})`,
  )
})
