// The session's hidden extension directories (masked in its jail) stay out of the host
// file tools' walks too: ls and both grep engines step around them even when asked to
// show hidden entries or pointed at the directory above them.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { grepTool } from '../../src/tools/fs/grep.js'
import { lsTool } from '../../src/tools/fs/ls.js'
import { PathGuard } from '../../src/tools/fs/paths.js'
import { call, context, files, rejection, tempDir } from './helpers.js'

type Node = { path: string; children?: Node[] }
const paths = (n: Node): string[] => (n.children ?? []).flatMap((c) => [c.path, ...paths(c)])

async function setup() {
  // Glob metacharacters in the workspace's own path: ripgrep's exclusion must stay literal.
  const ws = await tempDir('vis-tools-[h]{*}?-')
  await files(ws, {
    '.vis/extensions/secret.py': 'needle = "secret"\n',
    '.vis/extensions/sub/deeper.py': 'needle deeper\n',
    '.vis/notes.md': 'needle in notes\n',
    'src/app.py': 'needle in app\n',
  })
  const guard = new PathGuard([ws], 'test-session', [join(ws, '.vis/extensions')])
  return { ws, guard, ctx: context([ws]) }
}

test('ls never shows a hidden extension directory, even with is_hidden', async () => {
  const { guard, ctx } = await setup()
  const ls = lsTool(guard)
  const all = paths((await call(ls, ctx, '.', { depth: 6, is_hidden: true })) as Node)
  assert.deepEqual(all.sort(), ['.vis', '.vis/notes.md', 'src', 'src/app.py'])
  const vis = (await call(ls, ctx, '.vis', { is_hidden: true })) as Node & { entries: number }
  assert.deepEqual(paths(vis), ['.vis/notes.md'])
  assert.equal(vis.entries, 1)
  const denied = await rejection(call(ls, ctx, '.vis/extensions'))
  assert.equal(denied.code, 'tool.path-denied')
})

for (const engine of ['ripgrep', 'builtin'] as const) {
  test(`grep (${engine}) neither reads nor lists files in a hidden extension directory`, async () => {
    const { guard, ctx } = await setup()
    const grep = grepTool(guard, engine)
    const r = await call(grep, ctx, 'needle', { paths: ['.vis', 'src'] })
    assert.equal(r.engine, engine)
    assert.deepEqual(
      r.hits.map((h: any) => h.path),
      ['.vis/notes.md', 'src/app.py'],
    )
    const names = await call(grep, ctx, ['secret', 'deeper'], { paths: ['.vis'] })
    assert.deepEqual(names.hits, [])
    assert.deepEqual(names.name_matches, [])
    const listed = await call(grep, ctx, 'needle', { paths: ['.vis'], is_files_only: true })
    assert.deepEqual(
      listed.files.map((f: any) => f.path),
      ['.vis/notes.md'],
    )
    const denied = await rejection(call(grep, ctx, 'needle', { paths: ['.vis/extensions'] }))
    assert.equal(denied.code, 'tool.path-denied')
  })
}
