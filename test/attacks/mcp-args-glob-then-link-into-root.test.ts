// Attack (eighteenth outsider pass; surface: judge-word.ts globVerdict / expansionReaching). Since the
// seventeenth pass a shell pattern is expanded over the host's folders and each match judged by its real
// path, so `<outside>/l?nk/tools/x` with `<outside>/link -> W` is refused. But the expansion stops at the
// LAST pattern component ("what follows names files inside a match"), and a link AFTER it is left to "the
// caller's literal readings", which still hold the pattern and so resolve nothing. `<outside>/d?r/link/
// tools/hook.sh` with `<outside>/dir/link -> W` (a link outside every root into one, the same person's link
// the seventeenth pass's example had) passes, and bash sources W/tools/hook.sh. The same path without the
// pattern is refused.
//
// Reproduction: a session on W; <outside>/dir/link -> W. Servers `/bin/bash -c ". <outside>/dir/link/tools/
// hook.sh; ..."` (control) and `/bin/bash -c ". <outside>/d?r/link/tools/hook.sh; ..."`. The block writes
// W/tools/hook.sh (appends to a marker outside W) and connects both. Expected: both refused; no marker.
import assert from 'node:assert/strict'
import { mkdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { attackBase, attackFolders, connectEach, landed, runEngine, type Server } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-glob-then-link-')

test('a shell pattern whose match holds a link into a root after the last pattern component is refused', () => {
  const { W, home, outside, marker } = attackFolders(base)
  const links = join(base, 'links')
  mkdirSync(join(links, 'dir'), { recursive: true })
  symlinkSync(W, join(links, 'dir', 'link'))
  const sleeper = `node -e "setTimeout(() => {}, 3000)"`
  const server = (script: string): Server => ({
    command: '/bin/bash',
    args: ['-c', `${script}; ${sleeper}`],
    env: {},
    timeout_ms: 6_000,
  })
  const text = `echo "W/tools/hook.sh, written by the block, sourced on the host by bash through a pattern and a link after it" >> ${JSON.stringify(marker)}\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      control: server(`. ${links}/dir/link/tools/hook.sh`),
      pattern: server(`. ${links}/d?r/link/tools/hook.sh`),
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
  assert.match(out, /control refused mcp\.launch-denied/, `the path without a pattern is refused (${out})`)
  assert.equal(
    landed(marker),
    '',
    `args ["-c", ". ${links}/d?r/link/tools/hook.sh; ..."] passed the launch check (the expansion stops at the last ` +
      `pattern, and ${links}/dir/link leads into the session root ${W}) and the host's bash sourced the block's ` +
      `file: ${landed(marker)} (${out.slice(0, 500)})`,
  )
  assert.match(out, /pattern refused mcp\.launch-denied/, out)
})
