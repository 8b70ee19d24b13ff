// Attack (fourteenth outsider pass; surface: mcp.json `env` judged by src/mcp-client/env-spellings.ts
// expansions/wordsIn). A `${NAME}` the server will not have is read as kept and as empty, but the shell's
// own forms `${NAME:-word}`, `${NAME-word}`, `${NAME:=word}` are taken as one variable named `NAME:-word`:
// unknown, so the value is judged as `${NAME:-word}` (no place) and as '' (the cwd), and `word`, the
// place the shell substitutes when NAME is unset, is never judged. Bash expands BASH_ENV this way before
// it sources the file ("subjected to parameter expansion"), as a shell does GIT_SSH_COMMAND, EDITOR and
// PAGER. So `"BASH_ENV": "${NOTES_ENV:-W/config/env.sh}"` (a default the person can override) passes the
// launch check while `"BASH_ENV": "W/config/env.sh"` is refused, and every bash the server starts (a
// server run through a wrapper script) sources the block's file on the host, unconfined.
//
// Reproduction: session on W; servers `control` (bash -c 'sleep 5', env BASH_ENV=W/config/env.sh) and
// `default` (the same, env BASH_ENV=${NOTES_ENV:-W/config/env.sh}). The block writes W/config/env.sh
// (appending to a marker outside W) and connects both. Expected: both refused with mcp.launch-denied; the
// marker never written.
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { test } from 'node:test'
import { attackBase, attackFolders, connectEach, runEngine, type Server } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-shell-default-')

test('a shell default (NAME:-W/...) in an mcp.json env value is judged like the place it substitutes', () => {
  const { W, home, outside, marker } = attackFolders(base)
  const server = (BASH_ENV: string): Server => ({
    command: 'bash',
    args: ['-c', 'sleep 5'],
    env: { BASH_ENV },
    timeout_ms: 10_000,
  })
  const sh = `echo "W/config/env.sh, written by the block, sourced by the host's bash through BASH_ENV=$BASH_ENV" >> ${JSON.stringify(marker)}\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      control: server(`${W}/config/env.sh`),
      default: server(`\${NOTES_ENV:-${W}/config/env.sh}`),
    },
    [
      'import os',
      `W = ${JSON.stringify(W)}`,
      "os.makedirs(W + '/config', exist_ok=True)",
      `open(W + '/config/env.sh', 'w').write(${JSON.stringify(sh)})`,
      "print('planted')",
      ...connectEach(['control', 'default']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `BASH_ENV=W/config/env.sh is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    `env BASH_ENV=\${NOTES_ENV:-W/config/env.sh} passed the launch check (the shell's default word is never ` +
      `judged) and the host's bash sourced the block's file: ` +
      `${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''} (${out.slice(0, 500)})`,
  )
})
