// Attack (seventh outsider pass; SECURITY.md in scope: the host process and its other sessions must
// carry on whatever a sandbox sends; the sixth pass's fix made grep's `include` glob a linear automaton,
// "`**a**a…` cannot stall the host"): the same shape of pattern still reaches a backtracking regex on
// the host through a `.gitignore` the sandbox writes. The host's own tree walk (src/tools/fs/walk.ts,
// used by `index(dir)` and the builtin grep) honours `.gitignore` inside a repository with the `ignore`
// npm package (src/tools/fs/gitignore.ts), which compiles each rule to a JavaScript RegExp and runs it on
// the host's event loop against every entry's relative path. A rule of repeated `**/a/` segments
// (`**/a/**/a/**/a/**/a/**/a/**/a/**/a/**/b`) backtracks exponentially against a path of many `a/`
// components that never ends in `b`: 45 levels cost ~9 s here, and each more level or segment multiplies
// it (PATH_MAX allows 2000 levels). A `.git` directory (only stat-ed) makes the root a repository.
//
// Reproduction: a real engine session makes `.git/`, that `.gitignore` and a file 45 directories deep,
// then calls `index('.')`; a host timer measures the longest gap between its ticks. It fails on the
// current code because the host's event loop stops for seconds (a fix: match ignore rules with the same
// linear automaton as grep's include, or bound the rules' wildcards as for the include glob).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { inStallSession, worstStall } from './event-loop-stall.js'

test("a sandbox-written .gitignore cannot stop the host's event loop", async () => {
  await inStallSession('gitignore', async (engine, s) => {
    const w = await engine.runBlock(s.id, {
      code: [
        'import os',
        "os.makedirs('.git', exist_ok=True)",
        "open('.gitignore', 'w').write('**/a/' * 7 + '**/b\\n')",
        "d = '/'.join(['a'] * 45)",
        'os.makedirs(d)',
        "open(d + '/x.py', 'w').write('def f():\\n    pass\\n')",
        "print('ok')",
      ].join('\n'),
    })
    assert.equal(w.block.error, null, JSON.stringify(w.block.error))

    const { result: r, worst } = await worstStall(() =>
      engine.runBlock(s.id, {
        code: "try:\n    r = await index('.')\n    print('indexed')\nexcept Exception as e:\n    print('failed', getattr(e, 'code', e))",
        timeout_ms: 300_000,
      }),
    )
    assert.equal(r.block.error, null, JSON.stringify(r.block.error))
    assert.ok(
      worst < 1000,
      `the host's event loop (every session, stream and request it serves) stood still for ${Math.round(worst)} ms ` +
        `matching a sandbox-written .gitignore rule against a sandbox-made path (index: ${(r.block.stdout ?? '').trim()})`,
    )
  })
})
