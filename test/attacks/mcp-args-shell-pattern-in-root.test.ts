// Attack (sixteenth outsider pass; surface: checkArgs in src/mcp-client/launch.ts).
// The fifteenth pass made a shell's pathname patterns a reading of an env value: a word with `*`, `?` or
// `[...]` whose leading components could match a root's path is refused (`|/tm?/W/lesspipe.sh %s`). The
// args were judged from the fifteenth pass too, by the same readings (placesIn), but checkArgs only asks
// whether each reading's literal path lies in a root: the pattern test (globReaching), the refusal of
// `$(...)` and of `~user`, all of which checkServerEnv applies, are missing there. A server started as
// `bash -c '. /tm?/.../W/tools/hook.sh; ...'` (the usual way to source a venv's activate or a project's
// env file before exec'ing a server) passes, and bash globs the word to the block's file.
//
// Reproduction: session on W; servers `control` (env BASH_ENV=<the pattern>) and `pattern` (args
// `-c ". <the pattern>; node -e ..."`), command /bin/bash, where the pattern is W/tools/hook.sh with one
// letter of its first component replaced by `?`. The block writes W/tools/hook.sh (appends to a marker
// outside W) and connects both.
// Expected: both refused with mcp.launch-denied; the marker never written.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { attackBase, attackFolders, connectEach, landed, runEngine, type Server } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-args-pattern-')

test('a shell pattern in args that globs to a file in a root is refused', () => {
  assert.ok(existsSync('/bin/bash'), 'this test needs bash')
  const { W, home, outside, marker } = attackFolders(base)
  // /tmp/vis-.../work/tools/hook.sh as /tm?/vis-.../work/tools/hook.sh: the first component's last letter.
  const hook = join(W, 'tools', 'hook.sh')
  const first = hook.indexOf('/', 1)
  const pattern = `${hook.slice(0, first - 1)}?${hook.slice(first)}`
  const server = (args: string[], env: Record<string, string>): Server => ({
    command: '/bin/bash',
    args,
    env,
    timeout_ms: 6_000,
  })
  const sleeper = `node -e "setTimeout(() => {}, 3000)"`
  const text = `echo "W/tools/hook.sh, written by the block, sourced on the host by bash" >> ${JSON.stringify(marker)}\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      control: server(['-c', sleeper], { BASH_ENV: pattern }),
      pattern: server(['-c', `. ${pattern}; ${sleeper}`], {}),
    },
    [
      'import os',
      `W = ${JSON.stringify(W)}`,
      "os.makedirs(W + '/tools', exist_ok=True)",
      `open(W + '/tools/hook.sh', 'w').write(${JSON.stringify(text)})`,
      "print('planted')",
      ...connectEach(['control', 'pattern']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `env BASH_ENV=${pattern} is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    `args ["-c", ". ${pattern}; ..."] passed the launch check (checkArgs reads no pattern, while the same ` +
      `word in env is refused) and the host's bash sourced the block's file: ` +
      `${landed(marker)} (${out.slice(0, 500)})`,
  )
  assert.match(out, /pattern refused mcp\.launch-denied/, out)
})
