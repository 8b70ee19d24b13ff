// Attack (fifteenth outsider pass; surface: the value readings of src/mcp-client/env-spellings.ts).
// env-spellings reads `${NAME}` and the default forms `${NAME:-word}`..., and says other forms
// (`${NAME#pat}`, `${NAME/a/b}`) "are read as NAME's value, kept and empty". They are not: PARAMETER does not
// match `NAME%/`, so the whole `NAME%/` is taken for a variable name the server does not have, and the value
// is read only as the literal text and with the form emptied. bash expands BASH_ENV with every parameter form
// before sourcing it, so `${WORKSPACE%/}/.mcp/env.sh` (the usual idiom to drop a trailing slash) is
// <WORKSPACE>/.mcp/env.sh to bash and /.mcp/env.sh (or a word under the cwd) to the check. With WORKSPACE the
// project a session is rooted at (a data folder in a variable named otherwise, as SECURITY.md allows), a
// bash-run server sources, on the host, the script a block wrote. The same value written `${WORKSPACE}/...`
// is refused.
//
// Reproduction: session on W; servers `control` (bash, env WORKSPACE=W, BASH_ENV=${WORKSPACE}/.mcp/env.sh)
// and `pattern` (bash, env WORKSPACE=W/, BASH_ENV=${WORKSPACE%/}/.mcp/env.sh). The block writes
// W/.mcp/env.sh (it appends to a marker outside W) and connects both. Expected: both refused with
// mcp.launch-denied; the marker never written.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { test } from 'node:test'
import { attackBase, attackFolders, connectEach, landed, runEngine, type Server } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-pattern-')

test(`BASH_ENV=$\{WORKSPACE%/}/... with WORKSPACE a root is refused`, () => {
  const { W, home, outside, marker } = attackFolders(base)
  const server = (env: Record<string, string>): Server => ({
    command: '/bin/bash',
    args: ['-c', 'sleep 3'],
    env,
    timeout_ms: 6_000,
  })
  const script = `echo "W/.mcp/env.sh, written by the block, sourced by the host's bash through BASH_ENV" >> ${JSON.stringify(marker)}\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      control: server({ WORKSPACE: W, BASH_ENV: `$\{WORKSPACE}/.mcp/env.sh` }),
      pattern: server({ WORKSPACE: `${W}/`, BASH_ENV: `$\{WORKSPACE%/}/.mcp/env.sh` }),
    },
    [
      'import os',
      `W = ${JSON.stringify(W)}`,
      "os.makedirs(W + '/.mcp', exist_ok=True)",
      `open(W + '/.mcp/env.sh', 'w').write(${JSON.stringify(script)})`,
      "print('planted')",
      ...connectEach(['control', 'pattern']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `BASH_ENV=\${WORKSPACE}/... is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    `env BASH_ENV=$\{WORKSPACE%/}/.mcp/env.sh passed the launch check (the % form is not read as WORKSPACE) ` +
      `and the host's bash sourced the block's script: ${landed(marker)} ` +
      `(${out.slice(0, 500)})`,
  )
  assert.match(out, /pattern refused mcp\.launch-denied/, out)
})
