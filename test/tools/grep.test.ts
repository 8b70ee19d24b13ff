import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { grepTool } from '../../src/tools/fs/grep.js'
import { lineHash } from '../../src/tools/fs/lines.js'
import { findRipgrep } from '../../src/tools/fs/search.js'
import { call, context, files, guardFor, rejection, tempDir } from './helpers.js'

async function setup() {
  const ws = await tempDir()
  execFileSync('git', ['init', '-q', ws])
  await files(ws, {
    '.gitignore': 'build/\n*.log\n!keep.log\n',
    'src/app.ts': 'const Config = 1\nfunction load() {\n  return config\n}\n// TODO config later\n',
    'src/config.ts': 'export const config = { port: 8080 }\n',
    'src/util/config_helpers.ts': 'export const helper = "CONFIG"\n',
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
  const ctx = context([ws])
  return {
    ws,
    ctx,
    rg: grepTool(guardFor([ws]), 'ripgrep'),
    builtin: grepTool(guardFor([ws]), 'builtin'),
  }
}

test('ripgrep is installed here, so both engines are exercised', () => {
  assert.ok(findRipgrep(), 'rg must be on PATH (Debian package ripgrep)')
})

test('smart case: lower-case terms ignore case, a capital makes it exact', async () => {
  const { ctx, rg } = await setup()
  const lower = await call(rg, ctx, 'config')
  assert.equal(lower.case_sensitive, false)
  const paths = new Set(lower.hits.map((h: any) => h.path))
  assert.deepEqual([...paths].sort(), [
    'docs/guide.md',
    'keep.log',
    'src/app.ts',
    'src/config.ts',
    'src/util/config_helpers.ts',
    'sub/shared.txt',
  ])
  const upper = await call(rg, ctx, 'Config')
  assert.equal(upper.case_sensitive, true)
  assert.deepEqual(
    upper.hits.map((h: any) => [h.path, h.line, h.text]),
    [['src/app.ts', 1, 'const Config = 1']],
  )
  assert.equal(upper.hits[0].anchor, `1:${lineHash('const Config = 1')}`)
  // A CRLF file's hit text has no carriage return.
  assert.ok(lower.hits.some((h: any) => h.text === 'config shared'))
})

test('a list of terms is an OR; context lines come with anchors', async () => {
  const { ctx, rg } = await setup()
  const r = await call(rg, ctx, ['8080', 'todo'], { paths: ['src', 'docs'], context: 1 })
  assert.deepEqual(
    r.hits.map((h: any) => `${h.path}:${h.line}`),
    ['docs/guide.md:3', 'src/app.ts:5', 'src/config.ts:1'],
  )
  const guide = r.hits[0]
  assert.deepEqual(guide.before, [`2:${lineHash('')}|`])
  assert.deepEqual(guide.after, [`4:${lineHash('line')}|line`])
})

test('paging continues with next_offset; files-only lists files with counts', async () => {
  const { ctx, rg } = await setup()
  const seen: number[] = []
  let offset: number | null = 0
  let pages = 0
  while (offset !== null) {
    const r: any = await call(rg, ctx, 'needle', { limit: 50, offset })
    assert.equal(r.total, 120)
    seen.push(...r.hits.map((h: any) => h.line))
    offset = r.next_offset
    pages++
  }
  assert.equal(pages, 3)
  assert.deepEqual(
    seen,
    Array.from({ length: 120 }, (_, i) => i + 1),
  )
  const fo = await call(rg, ctx, 'config', { is_files_only: true, include: '*.ts' })
  assert.deepEqual(fo.files, [
    { path: 'src/app.ts', matches: 3 },
    { path: 'src/config.ts', matches: 1 },
    { path: 'src/util/config_helpers.ts', matches: 1 },
  ])
  assert.deepEqual(fo.hits, [])
})

test('file-name matches are ranked: exact name, prefix, substring, directory', async () => {
  const { ctx, rg } = await setup()
  const r = await call(rg, ctx, 'config')
  assert.deepEqual(
    r.name_matches.map((m: any) => m.path),
    ['src/config.ts', 'src/util/config_helpers.ts'],
  )
  const u = await call(rg, ctx, 'util')
  assert.deepEqual(
    u.name_matches.map((m: any) => [m.path, m.rank]),
    [['src/util/config_helpers.ts', 3]],
  )
})

test('hidden, ignored, binary and nested-ignored files are skipped, negations kept', async () => {
  const { ctx, rg } = await setup()
  const r = await call(rg, ctx, 'config', { is_files_only: true })
  const paths = r.files.map((f: any) => f.path)
  for (const p of ['build/out.js', 'debug.log', '.hidden/h.txt', 'sub/local.txt', 'bin.dat']) {
    assert.ok(!paths.includes(p), p)
  }
  assert.ok(paths.includes('keep.log'))
})

test('the in-process fallback gives the same results as ripgrep', async () => {
  const { ctx, rg, builtin } = await setup()
  const queries: [unknown, Record<string, unknown>][] = [
    ['config', {}],
    ['Config', {}],
    [['port', 'todo'], { context: 2 }],
    ['config', { is_files_only: true }],
    ['needle', { offset: 40, limit: 30, context: 1 }],
    ['line', { paths: ['docs', 'sub/shared.txt'] }],
    ['config', { include: ['*.md', 'src/**/*.ts'] }],
    ['export', { paths: 'src/config.ts' }],
    ['nothing matches this', {}],
  ]
  for (const [q, opts] of queries) {
    const a = await call(rg, ctx, q, opts)
    const b = await call(builtin, ctx, q, opts)
    assert.equal(a.engine, 'ripgrep')
    assert.equal(b.engine, 'builtin')
    delete a.engine
    delete b.engine
    assert.deepEqual(b, a, JSON.stringify(q))
  }
})

test('outside a repository both engines ignore .gitignore files alike', async () => {
  const ws = await tempDir()
  await files(ws, {
    '.gitignore': 'a.txt\n',
    'a.txt': 'term\n',
    'sub/.gitignore': 'b.txt\n',
    'sub/b.txt': 'term\n',
  })
  const ctx = context([ws])
  const a = await call(grepTool(guardFor([ws]), 'ripgrep'), ctx, 'term')
  const b = await call(grepTool(guardFor([ws]), 'builtin'), ctx, 'term')
  assert.deepEqual(
    a.hits.map((h: any) => h.path),
    ['a.txt', 'sub/b.txt'],
  )
  assert.deepEqual(b.hits, a.hits)
  assert.deepEqual(b.name_matches, a.name_matches)
})

test('grep called the way its command line reads (pattern=, path=): the refusal names what is missing and what is unknown', async () => {
  const { ctx, rg } = await setup()
  const bad = await rejection(call(rg, ctx, { pattern: 'config', path: '.' }))
  assert.equal(bad.code, 'tool.bad-args')
  assert.match(
    bad.message,
    /^grep\(query, .*\): query: Required; Unrecognized key\(s\) in object: 'pattern', 'path'$/,
  )
  // A wrong type for the same argument still says what was expected.
  const wrong = await rejection(call(rg, ctx, 42))
  assert.match(wrong.message, /query: Invalid input/)
})
