// Attack (sixteenth outsider pass; surface: the value readings of src/mcp-client/env-spellings.ts).
// less runs LESSOPEN's `|command %s` through popen(), that is `sh -c`, and a shell removes a backslash
// followed by a newline before anything else (POSIX 2.2.1: line continuation), inside double quotes too.
// The readings keep it: shellWords turns `\<newline>` into a newline character, the whitespace split cuts
// the word in two, and the `|` split keeps both characters; so `|<base>/wo\<newline>rk/tools/lesspipe.sh %s`
// names `wo\nrk`, `wo\` and `rk/...`, never the root `work`, and passes. The shell less starts joins
// the name back and runs the block's preprocessor. The same value without the continuation is refused
// (GIT_SSH_COMMAND, EDITOR, PAGER and every other value a tool runs with `sh -c` read the same way).
//
// Reproduction: session on W (a folder named `work`); servers `control` (env LESSOPEN="|W/tools/lesspipe.sh %s")
// and `continued` (the same with a backslash-newline inside W's last component), each a node process that
// runs `less /etc/hostname` at start (output to a pipe). The block writes W/tools/lesspipe.sh (appends to
// a marker outside W) and connects both.
// Expected: both refused with mcp.launch-denied; the marker never written.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { test } from 'node:test'
import {
  attackBase,
  attackFolders,
  connectEach,
  landed,
  runEngine,
  runsAtStart,
  type Server,
} from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-line-continuation-')

test("LESSOPEN with a shell line continuation inside a root's name is refused", () => {
  assert.ok(existsSync('/usr/bin/less'), 'this test needs less')
  const { W, home, outside, marker } = attackFolders(base)
  const server = (env: Record<string, string>): Server => runsAtStart('/usr/bin/less', ['/etc/hostname'], env)
  const script = `#!/bin/sh\necho "W/tools/lesspipe.sh, written by the block, run on the host by less through LESSOPEN" >> ${JSON.stringify(marker)}\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      control: server({ LESSOPEN: `|${W}/tools/lesspipe.sh %s` }),
      continued: server({ LESSOPEN: `|${W.slice(0, -2)}\\\n${W.slice(-2)}/tools/lesspipe.sh %s` }),
    },
    [
      'import os',
      `W = ${JSON.stringify(W)}`,
      "os.makedirs(W + '/tools', exist_ok=True)",
      `open(W + '/tools/lesspipe.sh', 'w').write(${JSON.stringify(script)})`,
      "os.chmod(W + '/tools/lesspipe.sh', 0o755)",
      "print('planted')",
      ...connectEach(['control', 'continued']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `LESSOPEN="|W/..." is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    'env LESSOPEN="|<W with a backslash-newline inside>/tools/lesspipe.sh %s" passed the launch check (no reading ' +
      "joins a shell's line continuation) " +
      `and the host's less ran the block's preprocessor: ${landed(marker)} ` +
      `(${out.slice(0, 500)})`,
  )
  assert.match(out, /continued refused mcp\.launch-denied/, out)
})
