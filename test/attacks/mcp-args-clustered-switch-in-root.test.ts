// Attack (sixteenth outsider pass; surface: checkArgs in src/mcp-client/launch.ts and the option readings
// of src/mcp-client/env-spellings.ts).
// An argument is read as a path with its option cut off only when the option is one letter (`-I/w/lib`
// gives `/w/lib`) or spelled `--opt=`. perl, like every getopt-style program, reads clustered switches:
// `-wI/w/lib` is `-w` then `-I/w/lib` (perlrun: "switches may be clustered"), as is `-TI`, `-CI`, `-sI`.
// The check cuts two characters (`I/w/lib`, relative) or the dashes (`wI/w/lib`, relative), both resolved
// under the server's cwd, so no reading names the root, and perl puts the block's folder first in @INC.
// `#!/usr/bin/perl -w` scripts make `-w` the usual first switch.
//
// Reproduction: session on W; servers `control` (args `-I<W>/lib -MPlanted -e sleep(3)`) and `clustered`
// (args `-wI<W>/lib -MPlanted -e sleep(3)`), command /usr/bin/perl. The block writes W/lib/Planted.pm
// (appends to a marker outside W) and connects both.
// Expected: both refused with mcp.launch-denied; the marker never written.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { test } from 'node:test'
import { attackBase, attackFolders, connectEach, landed, runEngine, type Server } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-args-clustered-')

test('perl args with -I clustered after another switch (-wI<root>/lib) are refused', () => {
  assert.ok(existsSync('/usr/bin/perl'), 'this test needs perl')
  const { W, home, outside, marker } = attackFolders(base)
  const server = (include: string): Server => ({
    command: '/usr/bin/perl',
    args: [include, '-MPlanted', '-e', 'sleep(3)'],
    env: {},
    timeout_ms: 6_000,
  })
  const module =
    `open(my $f, '>>', ${JSON.stringify(marker)}); ` +
    `print $f "W/lib/Planted.pm, written by the block, loaded on the host by perl\\n"; close($f); 1;\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    { control: server(`-I${W}/lib`), clustered: server(`-wI${W}/lib`) },
    [
      'import os',
      `W = ${JSON.stringify(W)}`,
      "os.makedirs(W + '/lib', exist_ok=True)",
      `open(W + '/lib/Planted.pm', 'w').write(${JSON.stringify(module)})`,
      "print('planted')",
      ...connectEach(['control', 'clustered']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `args -I<W>/lib is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    'args "-wI<W>/lib" passed the launch check (the reading cuts `-w` and keeps `I<W>/lib`, relative) and ' +
      `the host's perl loaded the block's module: ${landed(marker)} ` +
      `(${out.slice(0, 500)})`,
  )
  assert.match(out, /clustered refused mcp\.launch-denied/, out)
})
