// The session modes' loose ends (issue 32 §3), as a person meets them: a `vis chat --review`
// turn that throws does not carry its draft into the next turn, and `vis mcp --review` (or
// "serve": {"mode": "review"} in mcp.json) is refused with the way to read-only. Real vis
// processes against the provider double, real workers, real files.
import assert from 'node:assert/strict'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { pyCall } from '../agent/double.js'
import { cliWithDouble } from './cli-double.js'

const cli = cliWithDouble('loose')
const { visCli, dirs } = cli

test('vis chat --review: a turn whose review throws drops its draft; the next turn starts clean', async () => {
  const { home, root } = dirs()
  cli.double.script([
    { calls: [pyCall("open('notes.txt', 'w').write('from turn one\\n')\nawait write('one.txt', 'one\\n')")] },
    // While the first turn runs, the person edits notes.txt in the real root: applying the
    // turn's draft is then a conflict (draft.conflict), thrown by the review.
    () => {
      writeFileSync(join(root, 'notes.txt'), 'edited outside\n')
      return { text: 'Turn one done.' }
    },
    { calls: [pyCall("await write('two.txt', 'two\\n')")] },
    { text: 'Turn two done.' },
  ])
  const r = await visCli(['chat', '--review', '--apply'], {
    cwd: root,
    home,
    input: 'turn one\nturn two\n/exit\n',
  })
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stderr, /\[draft\.conflict\]/)
  assert.match(
    r.stdout,
    /\[review: the turn failed; its draft was dropped, the next turn starts from the root as it is\]/,
  )
  // The second turn's review shows and lands its own change only.
  const second = r.stdout.slice(r.stdout.indexOf('Turn two done.'))
  assert.match(second, /\+two/)
  assert.doesNotMatch(second, /from turn one|one\.txt/)
  assert.match(second, /\[review: applied 1 file\(s\): two\.txt\]/)
  assert.equal(readFileSync(join(root, 'notes.txt'), 'utf8'), 'edited outside\n')
  assert.equal(existsSync(join(root, 'one.txt')), false)
  assert.equal(readFileSync(join(root, 'two.txt'), 'utf8'), 'two\n')
})

test('vis mcp --review is refused, pointing to --read-only; so is mcp.json serve.mode review', async () => {
  const { home, root } = dirs()
  const flag = await visCli(['mcp', '--review', '--root', root], { cwd: root, home, input: '' })
  assert.equal(flag.code, 2, flag.stderr)
  assert.match(flag.stderr, /vis mcp --review: MCP sessions have no review mode.*--read-only/)
  writeFileSync(join(home, 'mcp.json'), JSON.stringify({ serve: { roots: [root], mode: 'review' } }))
  const config = await visCli(['mcp'], { cwd: root, home, input: '' })
  assert.notEqual(config.code, 0, config.stderr)
  assert.match(config.stderr, /MCP sessions have no review mode.*read-only/)
  // The read-only mode it points to starts (and stops when its client, here stdin, is gone).
  writeFileSync(join(home, 'mcp.json'), JSON.stringify({ serve: { roots: [root], mode: 'read-only' } }))
  const ro = await visCli(['mcp'], { cwd: root, home, input: '' })
  assert.equal(ro.code, 0, ro.stderr)
})
