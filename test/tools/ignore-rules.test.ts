// .gitignore rules matched by the glob automaton (src/tools/fs/ignore-rules.ts): git's semantics
// for each kind of rule, and a rule that backtracked in a regex engine answering at once.
import assert from 'node:assert/strict'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { IgnoreStack } from '../../src/tools/fs/gitignore.js'
import { compileIgnoreRules, ruleVerdict } from '../../src/tools/fs/ignore-rules.js'
import { Pacer } from '../../src/util/pacer.js'

const verdict = async (text: string, rel: string, isDir = false) => {
  const pace = new Pacer()
  return ruleVerdict(await compileIgnoreRules(text, pace), rel, isDir, pace)
}

const cases: [rules: string, rel: string, isDir: boolean, want: boolean | undefined][] = [
  ['*.log', 'x.log', false, true],
  ['*.log', 'a/b/x.log', false, true],
  ['*.log', 'a/x.logs', false, undefined],
  ['/build', 'build', true, true],
  ['/build', 'a/build', true, undefined],
  ['build/', 'a/build', true, true],
  ['build/', 'a/build', false, undefined],
  ['docs/*.md', 'docs/x.md', false, true],
  ['docs/*.md', 'a/docs/x.md', false, undefined],
  ['docs/*.md', 'docs/x/y.md', false, undefined],
  ['a/**/b', 'a/b', false, true],
  ['a/**/b', 'a/x/y/b', false, true],
  ['a/**/b', 'c/a/b', false, undefined],
  ['**/foo', 'foo', true, true],
  ['**/foo', 'x/y/foo', false, true],
  ['abc/**', 'abc/x/y', false, true],
  ['abc/**', 'abc', true, undefined],
  ['a**b', 'axyb', false, true],
  ['a**b', 'a/b', false, undefined],
  ['[ab].txt', 'b.txt', false, true],
  ['[ab].txt', 'c.txt', false, undefined],
  ['?.py', 'x.py', false, true],
  ['*.log\n!keep.log', 'keep.log', false, false],
  ['*.log\n!keep.log', 'other.log', false, true],
  ['!keep.log\n*.log', 'keep.log', false, true],
  ['# a comment\n\n', '# a comment', false, undefined],
  ['\\#hash', '#hash', false, true],
  ['\\!bang', '!bang', false, true],
  ['trail   ', 'trail', false, true],
  ['space\\ ', 'space ', false, true],
  ['{a,b}', '{a,b}', false, true],
  ['*.tmp\r\nx', 'y.tmp', false, true],
  ['[z-a]\nok', 'ok', false, true],
]

test('each kind of .gitignore rule matches as git reads it', async () => {
  for (const [rules, rel, isDir, want] of cases)
    assert.equal(
      await verdict(rules, rel, isDir),
      want,
      `${JSON.stringify(rules)} vs ${rel}${isDir ? '/' : ''}`,
    )
})

test('a rule that backtracks in a regex engine (**/a/ repeated) answers at once against a deep path', async () => {
  const start = performance.now()
  const deep = `${'a/'.repeat(400)}x.py`
  assert.equal(await verdict(`${'**/a/'.repeat(7)}**/b`, deep), undefined)
  assert.equal(await verdict(`${'*a'.repeat(200)}*b`, 'a'.repeat(250)), undefined)
  assert.ok(performance.now() - start < 2000, `took ${Math.round(performance.now() - start)} ms`)
})

test('an ignore stack: deeper files win, and a walk starting inside an ignored directory sees it all ignored', async () => {
  const repo = await mkdtemp(join(tmpdir(), 'vis-ignore-stack-'))
  try {
    await mkdir(join(repo, '.git'))
    await mkdir(join(repo, 'build', 'sub'), { recursive: true })
    await mkdir(join(repo, 'src'))
    await writeFile(join(repo, '.gitignore'), 'build/\n*.log\n')
    await writeFile(join(repo, 'src', '.gitignore'), '!keep.log\n')
    const inBuild = await IgnoreStack.at(join(repo, 'build', 'sub'), repo)
    assert.equal(await inBuild!.ignored(join(repo, 'build', 'sub', 'x.ts'), false), true)
    const inSrc = (await IgnoreStack.at(join(repo, 'src'), repo))!
    assert.equal(await inSrc.ignored(join(repo, 'src', 'x.ts'), false), false)
    assert.equal(await inSrc.ignored(join(repo, 'src', 'x.log'), false), true)
    assert.equal(await inSrc.ignored(join(repo, 'src', 'keep.log'), false), false)
    assert.equal(
      await IgnoreStack.at(repo, dirname(repo)).then((s) => s!.ignored(join(repo, 'build'), true)),
      true,
    )
  } finally {
    await rm(repo, { recursive: true, force: true })
  }
})
