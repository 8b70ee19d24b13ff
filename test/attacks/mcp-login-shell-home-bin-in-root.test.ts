// Attack (sixteenth outsider pass; surface: src/util/tool-home.ts homeInRoot, src/mcp-client/launch.ts PATH).
// The server's PATH is cleaned of entries in a root, and HOME is judged by shape: a root at a dot place, a
// dotfile or `~/.config`/`~/.local/bin` entry linking into one (fifteenth pass: "the user's bin, which shells
// put on PATH"). But the login profile every Debian and Ubuntu account starts with (/etc/skel/.profile) puts
// `$HOME/bin` on PATH, before `~/.local/bin` and before everything vis cleaned, whenever that folder exists,
// and `~/bin` has no leading dot, so a session on it (the person's scripts folder) leaves HOME the real one.
// A server started through a login shell (`bash -lc "npx -y <server>"`, the usual launch for nvm users, whose
// node is set up by the profile) then runs the `npx` a block wrote in ~/bin, on the host.
//
// Reproduction: a HOME U for the engine process whose .profile is /etc/skel/.profile; session on W = U/bin;
// servers `direct` (`bash -c "npx --version; node -e ..."`: no profile, the cleaned PATH holds) and `login` (the
// same with `bash -lc`). The block writes W/npx (appends to a marker outside W) and connects both.
// Expected: `login` is refused or starts with a HOME whose profile adds no root to PATH; the marker never written.
import assert from 'node:assert/strict'
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { attackBase, connectEach, runEngine, type Server } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-login-home-bin-')

test("a server started by a login shell does not run a program from a root at ~/bin (the skeleton profile's PATH)", () => {
  assert.ok(existsSync('/etc/skel/.profile'), 'this test needs the Debian skeleton profile')
  const U = join(base, 'user-home')
  const W = join(U, 'bin')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [U, W, home, outside]) mkdirSync(d, { recursive: true })
  copyFileSync('/etc/skel/.profile', join(U, '.profile'))
  const marker = join(outside, 'ran-on-the-host')
  const sleeper = `node -e "setTimeout(() => {}, 3000)"`
  const server = (flags: string, who: string): Server => ({
    command: '/bin/bash',
    args: [flags, `npx --version >/dev/null 2>&1; ${sleeper}`],
    env: { WHO: who },
    timeout_ms: 6_000,
  })
  const npx = `#!/bin/sh\necho "W/npx, written by the block, run on the host for the server $WHO with HOME=$HOME" >> ${JSON.stringify(marker)}\n`
  const before = process.env.HOME
  process.env.HOME = U
  let out: string
  try {
    out = runEngine(
      base,
      W,
      home,
      outside,
      { direct: server('-c', 'direct'), login: server('-lc', 'login') },
      [
        'import os',
        `W = ${JSON.stringify(W)}`,
        `open(W + '/npx', 'w').write(${JSON.stringify(npx)})`,
        "os.chmod(W + '/npx', 0o755)",
        "print('planted')",
        ...connectEach(['direct', 'login']),
      ],
    )
  } finally {
    process.env.HOME = before
  }
  assert.match(out, /planted/, out)
  assert.ok(
    !existsSync(marker),
    `a root at ${W} (~/bin, no leading dot) left the server the real HOME, whose skeleton .profile put ~/bin first ` +
      "on PATH for a login shell, and the host ran the block's npx: " +
      `${existsSync(marker) ? [...new Set(readFileSync(marker, 'utf8').trim().split('\n'))].join(' / ') : ''} (${out.slice(0, 500)})`,
  )
})
