// Attack (eighth outsider pass; SECURITY.md "Host-side work of the file tools": "The host file tools run
// in the process that serves every session, on text and names the sandbox chose; none of their own
// work may grow with that text past a bound"). The .gitignore files inside a root are the sandbox's to
// write, and the host's walk (index(dir), ls, grep's builtin engine: src/tools/fs/walk.ts, gitignore.ts)
// reads each one up to 1 MiB and matches every path against EVERY rule of EVERY .gitignore from the
// repository root down (IgnoreStack.ignored, the `ignore` package: one regular expression per rule),
// synchronously on the event loop. 1 MiB holds ~95 000 rules; a directory chain of N levels, each with
// such a .gitignore, makes one path test N x 95 000 regex matches: seconds per file with nothing else
// running on the host (every other session's blocks, the HTTP API, the event streams wait).
//
// Reproduction: a block makes `.git` and 8 nested directories, each with a 1 MiB .gitignore of rules that
// never match (`x<i>*y*z`), and one .py file at the bottom (9 MiB in all, far inside the disk budget);
// the next block calls `index(".")`. The test measures the longest the host's event loop went without
// running a 10 ms timer: several seconds on the current code (a fix: bound the rules read per walk, or
// match them off the event loop / in a worker with a deadline, as the grep glob and patch search were).
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'
import { worstStall } from './event-loop-stall.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-gitignore-rules-'))
after(() => rmSync(base, { recursive: true, force: true }))

test('a root full of .gitignore rules does not stall the host event loop for seconds', async () => {
  const home = join(base, 'home')
  const root = join(base, 'root')
  mkdirSync(home)
  mkdirSync(root)
  process.env.VIS_HOME = home
  const e = await createEngine({ home, pool: { size: 0 } })
  try {
    const s = await e.createSession({ roots: [root] })
    const setup = await e.runBlock(s.id, {
      code: [
        'import os',
        "os.makedirs('.git', exist_ok=True)",
        "rules = '\\n'.join(f'x{i}*y*z' for i in range(95000))[:(1 << 20) - 1]",
        "d = '.'",
        'for _ in range(8):',
        "    open(os.path.join(d, '.gitignore'), 'w').write(rules)",
        "    d = os.path.join(d, 'd')",
        '    os.makedirs(d, exist_ok=True)',
        "open(os.path.join(d, 'f.py'), 'w').write('def f():\\n    pass\\n')",
      ].join('\n'),
    })
    assert.equal(setup.block.error, null, JSON.stringify(setup.block.error))
    const { result, worst } = await worstStall(() =>
      e.runBlock(s.id, { code: 'r = await index("."); print(r["skeleton"][:60])', timeout_ms: 120_000 }),
    )
    assert.ok(
      worst < 1000,
      `index(".") over 8 levels of 1 MiB .gitignore files held the host's event loop for ${Math.round(worst)} ms in one ` +
        `piece (every other session and the HTTP API waited); block: ${JSON.stringify(result.block.stdout ?? result.block.error).slice(0, 200)}`,
    )
  } finally {
    await e.close()
  }
})
