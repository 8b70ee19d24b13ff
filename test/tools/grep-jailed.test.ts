import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { toolJail } from '../../src/sessions/tool-jail.js'
import { grepTool } from '../../src/tools/fs/grep.js'
import { normalizePolicy } from '../../src/worker/worker-policy.js'
import { call, context, files, guardFor, tempDir } from './helpers.js'

// In a confined session grep's ripgrep runs in the session's tool jail (src/tools/fs/search.ts):
// honest searches must answer exactly as the in-process engine does, which reads through the
// host's guard.

const jails: { dispose(): Promise<void> }[] = []
after(async () => {
  for (const j of jails) await j.dispose()
})

let spawned = 0
function jailedContext(roots: string[]) {
  const jail = toolJail({ sessionId: 'grep-jailed', policy: normalizePolicy({ roots }) })
  jails.push(jail)
  const spawn: typeof jail.spawn = (command, args, opts) => {
    spawned++
    return jail.spawn(command, args, opts)
  }
  return { ...context(roots), spawn }
}

test('ripgrep in the tool jail answers as the in-process engine does', async () => {
  const ws = await tempDir()
  execFileSync('git', ['init', '-q', ws])
  await files(ws, {
    '.gitignore': 'build/\n*.log\n!keep.log\n',
    'src/app.ts': 'const Config = 1\nfunction load() {\n  return config\n}\n// TODO config later\n',
    'src/config.ts': 'export const config = { port: 8080 }\n',
    'docs/guide.md': 'Set the config.\n\nThe Port is 8080.\nline\nline\nline\nend config\n',
    'build/out.js': 'config in build\n',
    'debug.log': 'config in a log\n',
    'keep.log': 'config kept\n',
    '.hidden/h.txt': 'config hidden\n',
    'sub/.gitignore': 'local.txt\n',
    'sub/local.txt': 'config local\n',
    'sub/shared.txt': 'config shared\r\nsecond\r\n',
    'big/lines.txt': Array.from({ length: 120 }, (_, i) => `needle ${i}`).join('\n'),
  })
  await writeFile(join(ws, 'bin.dat'), Buffer.from('config\0binary'))
  const ctx = jailedContext([ws])
  const rg = grepTool(guardFor([ws]), 'ripgrep')
  const builtin = grepTool(guardFor([ws]), 'builtin')
  const queries: [unknown, Record<string, unknown>][] = [
    ['config', {}],
    ['Config', {}],
    [['port', 'todo'], { context: 2 }],
    ['config', { is_files_only: true }],
    ['needle', { offset: 40, limit: 30, context: 1 }],
    ['line', { paths: ['docs', 'sub/shared.txt'] }],
    ['export', { paths: 'src/config.ts' }],
  ]
  for (const [q, opts] of queries) {
    const a = await call(rg, ctx, q, opts)
    const b = await call(builtin, ctx, q, opts)
    assert.equal(a.engine, 'ripgrep')
    delete a.engine
    delete b.engine
    assert.deepEqual(a, b, JSON.stringify(q))
  }
  // The jail really ran it: ripgrep went through the jail's spawn, and found something.
  const before = spawned
  const some = await call(rg, ctx, 'config')
  assert.ok(spawned > before, 'ripgrep did not run in the jail')
  assert.ok(some.hits.length >= 5, JSON.stringify(some))
})

test('two roots: ripgrep in the jail searches each one at its own path', async () => {
  const a = await tempDir()
  const b = await tempDir()
  await files(a, { 'x.txt': 'term a\n' })
  await mkdir(join(b, 'd'))
  await files(b, { 'd/y.txt': 'term b\n' })
  const ctx = jailedContext([a, b])
  const r = await call(grepTool(guardFor([a, b]), 'ripgrep'), ctx, 'term', { paths: ['.', join(b, 'd')] })
  assert.deepEqual(
    r.hits.map((h: { path: string }) => h.path).sort(),
    [join(b, 'd', 'y.txt'), 'x.txt'].sort(),
  )
})

test('a root inside a repository: the ignore files above the root count in the jail too', async () => {
  const repo = await tempDir()
  execFileSync('git', ['init', '-q', repo])
  await files(repo, {
    '.gitignore': '*.log\n',
    'sub/.gitignore': 'local.txt\n',
    'sub/a.txt': 'term\n',
    'sub/b.log': 'term\n',
    'sub/local.txt': 'term\n',
  })
  const root = join(repo, 'sub')
  const ctx = jailedContext([root])
  const a = await call(grepTool(guardFor([root]), 'ripgrep'), ctx, 'term')
  const b = await call(grepTool(guardFor([root]), 'builtin'), ctx, 'term')
  assert.deepEqual(
    b.hits.map((h: { path: string }) => h.path),
    ['a.txt'],
  )
  delete a.engine
  delete b.engine
  assert.deepEqual(a, b)
})
