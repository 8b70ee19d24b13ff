// Attack (fourteenth outsider pass; surface: mcp.json `env` judged by src/mcp-client/env-spellings.ts
// placesIn and server-env.ts). Every reading of a value is resolved with path.resolve, which removes a `..`
// segment LEXICALLY, before any link is followed; the kernel resolves `..` after the link before it. So a
// value that walks into a root and back out of it (`W/tools/../../shared/lib`: the person means the
// folder beside W) is judged as `<base>/shared/lib`, outside every root, and its real path is taken of that
// lexical spelling too. The sandbox, which writes W, makes `W/tools` a link to `a/b` inside W: the kernel
// now reads `W/tools/../..` as W, and a program that opens its search path as given (perl's @INC, bash's
// BASH_ENV, ld.so's LD_LIBRARY_PATH; Python and Node normalise theirs lexically too) loads W/shared/lib,
// the block's.
//
// Reproduction: session on W; servers `control` (perl -MNotes, env PERL5LIB=W/shared/lib) and `dotdot`
// (the same, env PERL5LIB=W/tools/../../shared/lib; the person's <base>/shared/lib exists, the folder they
// meant). The block writes W/shared/lib/Notes.pm, links W/tools -> a/b and connects both. Expected: both
// refused with mcp.launch-denied; the marker never written.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { attackBase, connectEach, runEngine, type Server } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-dotdot-')

test('a `..` in an mcp.json env value is judged after the links before it, as the kernel reads it', () => {
  const W = join(base, 'work')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  // The folder the person's value names: beside W, the host's own.
  for (const d of [W, home, outside, join(base, 'shared', 'lib')]) mkdirSync(d, { recursive: true })
  const marker = join(outside, 'ran-on-the-host')
  const server = (PERL5LIB: string): Server => ({
    command: 'perl',
    args: ['-MNotes', '-e', 'sleep 5'],
    env: { PERL5LIB },
    timeout_ms: 10_000,
  })
  const pm = `package Notes;\nopen(my $f, '>>', ${JSON.stringify(marker)}); print $f "W/shared/lib/Notes.pm, written by the block, loaded by the host's perl through PERL5LIB=$ENV{PERL5LIB}\\n"; close($f);\n1;\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    { control: server(`${W}/shared/lib`), dotdot: server(`${W}/tools/../../shared/lib`) },
    [
      'import os',
      `W = ${JSON.stringify(W)}`,
      "os.makedirs(W + '/shared/lib', exist_ok=True)",
      "os.makedirs(W + '/a/b', exist_ok=True)",
      `open(W + '/shared/lib/Notes.pm', 'w').write(${JSON.stringify(pm)})`,
      "os.symlink('a/b', W + '/tools')",
      "print('planted')",
      ...connectEach(['control', 'dotdot']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `PERL5LIB=W/shared/lib is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    `env PERL5LIB=W/tools/../../shared/lib was judged with its \`..\` removed lexically (outside every root), ` +
      `the block made W/tools a link, and the host's perl loaded the block's module: ` +
      `${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''} (${out.slice(0, 500)})`,
  )
})
