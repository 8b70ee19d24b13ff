import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { test } from 'node:test'
import { lsTool } from '../../src/tools/fs/ls.js'
import { call, context, files, guardFor, rejection, tempDir } from './helpers.js'

type Node = { name: string; path: string; type: string; size: number | null; children?: Node[] }
const names = (n: Node): string[] => (n.children ?? []).flatMap((c) => [c.path, ...names(c)])

async function setup(git = true) {
  const ws = await tempDir()
  if (git) execFileSync('git', ['init', '-q', ws])
  await files(ws, {
    '.gitignore': '*.tmp\n/build\nlogs/\n!important.tmp\n',
    'a.txt': 'aaaa',
    'x.tmp': '',
    'important.tmp': '',
    'build/out': '',
    'src/build/keep.ts': '',
    'src/logs': 'a file named logs is not a directory',
    'logs/today.txt': '',
    'src/.gitignore': 'gen/\n',
    'src/gen/g.ts': '',
    'src/main.ts': '',
    'src/deep/er/est.ts': '',
    '.env': 'SECRET=1',
  })
  return { ws, ls: lsTool(guardFor([ws])), ctx: context([ws]) }
}

test('ls returns a nested tree with sizes, honouring .gitignore the way git does', async () => {
  const { ls, ctx, ws } = await setup()
  const t = (await call(ls, ctx, '.', { depth: 5 })) as Node & { truncated: boolean }
  assert.equal(t.type, 'directory')
  assert.equal(t.truncated, false)
  const all = names(t)
  assert.deepEqual(all.sort(), [
    'a.txt',
    'important.tmp',
    'src',
    'src/build',
    'src/build/keep.ts',
    'src/deep',
    'src/deep/er',
    'src/deep/er/est.ts',
    'src/logs',
    'src/main.ts',
  ])
  assert.equal(t.children!.find((c) => c.name === 'a.txt')!.size, 4)
  // The same names as git's own view of untracked, non-ignored files.
  const gitFiles = execFileSync('git', ['ls-files', '--others', '--exclude-standard'], {
    cwd: ws,
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
    .filter((p) => !p.split('/').some((c) => c.startsWith('.')))
    .sort()
  const lsFiles = all.filter((p) => !['src', 'src/build', 'src/deep', 'src/deep/er'].includes(p)).sort()
  assert.deepEqual(lsFiles, gitFiles)
})

test('ls options: hidden entries, no gitignore, depth and entry limits', async () => {
  const { ls, ctx } = await setup()
  const hidden = names((await call(ls, ctx, { is_hidden: true, depth: 1 })) as Node)
  assert.ok(hidden.includes('.env') && hidden.includes('.gitignore'))
  assert.ok(!hidden.includes('.git'))
  const all = names((await call(ls, ctx, '.', { is_respect_gitignore: false, depth: 3 })) as Node)
  assert.ok(all.includes('x.tmp') && all.includes('build/out') && all.includes('src/gen/g.ts'))
  const shallow = (await call(ls, ctx, 'src', { depth: 1 })) as Node
  assert.equal(shallow.path, 'src')
  assert.ok(shallow.children!.every((c) => c.children === undefined))
  const limited = await call(ls, ctx, '.', { depth: 5, limit: 3 })
  assert.equal(limited.truncated, true)
  assert.equal(limited.entries, 3)
})

test('outside a git repository .gitignore files do not apply', async () => {
  const { ls, ctx } = await setup(false)
  const all = names((await call(ls, ctx, '.', { depth: 3 })) as Node)
  assert.ok(all.includes('x.tmp') && all.includes('build/out') && all.includes('src/gen/g.ts'))
})

test('ls of a file or a missing path is an error a model can act on', async () => {
  const { ls, ctx } = await setup()
  assert.equal((await rejection(call(ls, ctx, 'a.txt'))).code, 'tool.not-a-directory')
  assert.equal((await rejection(call(ls, ctx, 'missing'))).code, 'tool.not-found')
  assert.equal((await rejection(call(ls, ctx, '.', { depth: 'deep' }))).code, 'tool.bad-args')
})
