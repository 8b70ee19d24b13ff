import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { gitTool } from '../../src/tools/git/git.js'
import { defaultTools, insideGitRepo } from '../../src/tools/index.js'
import { call, context, files, guardFor, rejection, tempDir } from './helpers.js'

const KEYS = ['args', 'cmd', 'duration_ms', 'exit', 'stderr', 'stdout', 'timed_out']

async function repo() {
  const ws = await tempDir()
  execFileSync('git', ['init', '-q', '-b', 'main', ws])
  await files(ws, { 'a.txt': 'hello\n' })
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@e',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@e',
  }
  execFileSync('git', ['add', '.'], { cwd: ws })
  execFileSync('git', ['commit', '-q', '-m', 'first commit'], { cwd: ws, env })
  return ws
}

test('git runs in the workspace root and returns a total result', async () => {
  const ws = await repo()
  await mkdir(join(ws, 'sub'))
  const git = gitTool(guardFor([ws]))
  const ctx = context([ws])
  const log = await call(git, ctx, 'log', '--format=%s')
  assert.deepEqual(Object.keys(log).sort(), KEYS)
  assert.equal(log.cmd, 'git')
  assert.deepEqual(log.args, ['log', '--format=%s'])
  assert.equal(log.stdout, 'first commit\n')
  assert.equal(log.exit, 0)
  assert.equal(log.timed_out, false)
  assert.equal(typeof log.duration_ms, 'number')
  const top = await call(git, ctx, ['rev-parse', '--show-toplevel'])
  assert.equal(top.stdout.trim(), ws)
})

test('a failing git command is data, not an error', async () => {
  const ws = await repo()
  const git = gitTool(guardFor([ws]))
  const r = await call(git, context([ws]), 'checkout', 'no-such-branch')
  assert.deepEqual(Object.keys(r).sort(), KEYS)
  assert.notEqual(r.exit, 0)
  assert.match(r.stderr, /no-such-branch/)
  assert.equal(r.stdout, '')
  assert.equal((await rejection(call(git, context([ws])))).code, 'tool.bad-args')
})

test('the default tool set: files always, git inside a repository, shell when toggled on', async () => {
  const ws = await repo()
  const plain = await tempDir()
  const names = async (roots: string[], shell?: boolean) =>
    (await defaultTools({ roots, shell })).map((t) => t.name).sort()
  const fileNames = [
    'cat',
    'create_dirs',
    'delete',
    'exists',
    'grep',
    'index',
    'ls',
    'move',
    'patch',
    'write',
  ]
  assert.deepEqual(await names([plain]), fileNames)
  assert.deepEqual(await names([ws]), [...fileNames, 'git'].sort())
  assert.deepEqual(await names([join(ws)], true), [...fileNames, 'git', 'shell'].sort())
  assert.equal(await insideGitRepo(plain), false)
  await mkdir(join(ws, 'nested'))
  assert.equal(await insideGitRepo(join(ws, 'nested')), true)
  for (const t of await defaultTools({ roots: [ws], shell: true })) {
    assert.ok(t.doc.length > 20 && t.signature.startsWith('('), t.name)
  }
})
