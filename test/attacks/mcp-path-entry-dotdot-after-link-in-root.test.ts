// Attack (sixteenth outsider pass; surface: cleanPath and judgeRunning in src/mcp-client/launch.ts).
// The fourteenth pass read an env value's `..` as the kernel does (the folder before each `..` followed link
// by link; env-spellings.ts kernelReadings), because perl, bash and ld.so open a path as given. PATH is not
// judged by those readings: launch.ts cleans it entry by entry with places.holding, which compares the
// entry's text, its real path and its parent's, each of them resolved with `..` removed by text. An entry
// spelled `<base>/./work/tools/../../bin` (its text does not start with the root's path; by text it is
// `<base>/bin`, outside every root) is kept and handed to the server as written, and once the block makes
// W/tools a link to W/a/b, every lookup the server's shell makes through that entry lands in W/bin.
// An entry spelled plainly in the root is passed over.
//
// Reproduction: session on W = <base>/work; servers `control` (env PATH=<W>/bin:/usr/bin:/bin) and `dotdot`
// (env PATH=<base>/./work/tools/../../bin:/usr/bin:/bin), each `/bin/bash -c "planted-helper; node -e ..."`.
// The block makes W/tools a link to W/a/b and writes W/bin/planted-helper (appends to a marker outside W),
// then connects both.
// Expected: the `..` entry passed over or the start refused; the marker never written.
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { test } from 'node:test'
import { attackBase, attackFolders, connectEach, runEngine, type Server } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-path-dotdot-')

test('a PATH entry whose `..` climbs back into a root through a link is passed over', () => {
  assert.ok(existsSync('/bin/bash'), 'this test needs bash')
  const { W, home, outside, marker } = attackFolders(base)
  const server = (entry: string, who: string): Server => ({
    command: '/bin/bash',
    args: ['-c', `planted-helper; node -e "setTimeout(() => {}, 3000)"`],
    env: { PATH: `${entry}:/usr/local/bin:/usr/bin:/bin`, WHO: who },
    timeout_ms: 6_000,
  })
  const helper = `#!/bin/sh\necho "W/bin/planted-helper, written by the block, run on the host for the server $WHO" >> ${JSON.stringify(marker)}\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      control: server(`${W}/bin`, 'control'),
      dotdot: server(`${base}/./work/tools/../../bin`, 'dotdot'),
    },
    [
      'import os',
      `W = ${JSON.stringify(W)}`,
      "os.makedirs(W + '/a/b', exist_ok=True)",
      "os.makedirs(W + '/bin', exist_ok=True)",
      "os.symlink(W + '/a/b', W + '/tools')",
      `open(W + '/bin/planted-helper', 'w').write(${JSON.stringify(helper)})`,
      "os.chmod(W + '/bin/planted-helper', 0o755)",
      "print('planted')",
      ...connectEach(['control', 'dotdot']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.ok(
    !existsSync(marker),
    `env PATH entry ${base}/./work/tools/../../bin was kept (by text it is ${base}/bin, outside every root) and ` +
      "the kernel, following the block's link W/tools -> W/a/b before each `..`, gave the server's bash W/bin: " +
      `${existsSync(marker) ? [...new Set(readFileSync(marker, 'utf8').trim().split('\n'))].join(' / ') : ''} (${out.slice(0, 500)})`,
  )
})
