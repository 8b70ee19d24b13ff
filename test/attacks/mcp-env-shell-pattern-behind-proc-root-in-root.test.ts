// Attack (sixteenth outsider pass; surface: globReaching in src/mcp-client/server-env.ts).
// The fifteenth pass refuses a word with `*`, `?` or `[...]` whose leading components could match a root's
// path (`|/tm?/W/lesspipe.sh %s`): the pattern is compared component by component with the root's resolved
// path, from `/`. A path may reach `/` through a link first, and every Linux host has one that leads to
// `/` itself: `/proc/self/root`. `|/proc/self/root/tm?/.../work/tools/lesspipe.sh %s` starts with `proc`, so
// no root's components match it; its non-pattern reading resolves the existing prefix (`/proc/self/root`,
// really `/`) and keeps the rest as text (`/tm?/...`), which names no root either. The shell less starts
// (popen) globs it to the root's file. The same word without the link prefix is refused.
//
// Reproduction: session on W; servers `control` (env LESSOPEN="|<W with one letter of its first component
// as ?>/tools/lesspipe.sh %s") and `procroot` (the same behind /proc/self/root), each a node process that runs
// `less /etc/hostname` at start (output to a pipe). The block writes W/tools/lesspipe.sh (appends to a
// marker outside W) and connects both.
// Expected: both refused with mcp.launch-denied; the marker never written.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
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

const base = attackBase('vis-attack-mcp-glob-proc-root-')

test('a shell pattern reaching a root behind /proc/self/root is refused', () => {
  assert.ok(existsSync('/usr/bin/less'), 'this test needs less')
  const { W, home, outside, marker } = attackFolders(base)
  const program = join(W, 'tools', 'lesspipe.sh')
  const first = program.indexOf('/', 1)
  const pattern = `${program.slice(0, first - 1)}?${program.slice(first)}`
  const server = (env: Record<string, string>): Server => runsAtStart('/usr/bin/less', ['/etc/hostname'], env)
  const script = `#!/bin/sh\necho "W/tools/lesspipe.sh, written by the block, run on the host by less through LESSOPEN" >> ${JSON.stringify(marker)}\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      control: server({ LESSOPEN: `|${pattern} %s` }),
      procroot: server({ LESSOPEN: `|/proc/self/root${pattern} %s` }),
    },
    [
      'import os',
      `W = ${JSON.stringify(W)}`,
      "os.makedirs(W + '/tools', exist_ok=True)",
      `open(W + '/tools/lesspipe.sh', 'w').write(${JSON.stringify(script)})`,
      "os.chmod(W + '/tools/lesspipe.sh', 0o755)",
      "print('planted')",
      ...connectEach(['control', 'procroot']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `LESSOPEN="|${pattern} %s" is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    `env LESSOPEN="|/proc/self/root${pattern} %s" passed the launch check (the pattern's components are ` +
      'compared from /, and /proc/self/root is / behind a link) ' +
      `and the host's less ran the block's preprocessor: ${landed(marker)} ` +
      `(${out.slice(0, 500)})`,
  )
  assert.match(out, /procroot refused mcp\.launch-denied/, out)
})
