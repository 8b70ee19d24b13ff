// Attack (fifteenth outsider pass; surface: the value readings of src/mcp-client/env-spellings.ts).
// LESSOPEN is one of the names the rule targets (the thirteenth pass's list: LESS), and its documented
// form is `|<program> %s` (less(1): "the input preprocessor is a pipe"; lesspipe's own `eval` prints
// `LESSOPEN="| /usr/bin/lesspipe %s"` and most guides write it without the space, `"|lesspipe %s"`), also
// `||` and `|-`. The value's words are cut at whitespace, `:`, `=`, `,`, `;` and quotes, never at `|`, so
// `|<W>/tools/lesspipe.sh %s` yields the word `|<W>/...`, resolved under the cwd: no place in a root. less
// runs the preprocessor for every file it opens, with or without a terminal, so a server that shows files
// through less (or a pager-using tool it runs) executes the program a block wrote. The same value with a
// space after the `|` is refused.
//
// Reproduction: session on W; servers `control` (env LESSOPEN="| W/tools/lesspipe.sh %s") and `pipe` (env
// LESSOPEN="|W/tools/lesspipe.sh %s"); each a node process that runs `less /etc/hostname` at start (output
// to a pipe). The block writes W/tools/lesspipe.sh (appends to a marker outside W) and connects both.
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

const base = attackBase('vis-attack-mcp-lessopen-')

test('LESSOPEN="|<a program in a root> %s" is refused', () => {
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
      control: server({ LESSOPEN: `| ${W}/tools/lesspipe.sh %s` }),
      pipe: server({ LESSOPEN: `|${W}/tools/lesspipe.sh %s` }),
    },
    [
      'import os',
      `W = ${JSON.stringify(W)}`,
      "os.makedirs(W + '/tools', exist_ok=True)",
      `open(W + '/tools/lesspipe.sh', 'w').write(${JSON.stringify(script)})`,
      "os.chmod(W + '/tools/lesspipe.sh', 0o755)",
      "print('planted')",
      ...connectEach(['control', 'pipe']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `LESSOPEN="| W/..." is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    'env LESSOPEN="|W/tools/lesspipe.sh %s" passed the launch check (the word `|W/...` is no path in a root) ' +
      `and the host's less ran the block's preprocessor: ${landed(marker)} ` +
      `(${out.slice(0, 500)})`,
  )
  assert.match(out, /pipe refused mcp\.launch-denied/, out)
})
