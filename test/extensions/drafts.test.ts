// Trusted extensions in a draft: their tools and hooks run on the host, unjailed, yet see
// and write the draft where the session's root is (their worker starts in the draft's
// mount namespace), while the real root stays byte-identical.
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createEngine, type Engine } from '../../src/engine/index.js'
import { treeHash } from '../drafts/helpers.js'
import { extension, python, tempLayout, write } from './helpers.js'

const { base, home, global } = tempLayout('ext-drafts')
const root = join(base, 'workspace')
mkdirSync(root)
writeFileSync(join(root, 'notes.txt'), 'real\n')
writeFileSync(join(root, 'guard.txt'), 'fine\n')
const abs = (name: string) => JSON.stringify(join(root, name))

write(
  join(global, 'scribe.py'),
  extension(
    'scribe',
    `import os

ROOT = ${JSON.stringify(root)}

def edit(path, add):
    """Appends to a file; returns what it held before."""
    with open(path) as f:
        before = f.read()
    with open(path, "w") as f:
        f.write(before + add)
    return before

def make(path, text):
    """Creates a file."""
    with open(path, "x") as f:
        f.write(text)
    return os.path.exists(path)

def guard(args):
    # Reads the file the model is about to cat, by its absolute path.
    with open(os.path.join(ROOT, args[0])) as f:
        if "forbidden" in f.read():
            raise vis.Refuse("that file is marked forbidden")
`,
    ', tools=[edit, make], op_hooks=[vis.before("cat", guard)]',
  ),
)

let engine: Engine | undefined
const run = async (e: Engine, id: string, code: string) => {
  const { block } = await e.runBlock(id, { code })
  assert.equal(block.error, null, JSON.stringify(block.error))
  return block.stdout
}
after(async () => {
  await engine?.close()
  rmSync(base, { recursive: true, force: true })
})

test('in a draft an extension tool reads and writes the draft (relative and absolute paths), its hook sees the draft; the real root stays byte-identical; on the trunk again they see the real root', async () => {
  engine = await createEngine({ home, python, pool: { size: 0 }, project: root })
  assert.deepEqual(engine.extensions?.warnings(), [])
  const s = await engine.createSession({ roots: [root] })
  const before = treeHash(root)
  // The trusted worker starts on the trunk first: entering the draft must replace it.
  assert.equal(await run(engine, s.id, 'print(repr(await scribe_edit("notes.txt", "")))'), "'real\\n'\n")

  await engine.draft(s.id).create('with extensions')
  const out = await run(
    engine,
    s.id,
    [
      'await write("notes.txt", "draft\\n")',
      'await write("guard.txt", "forbidden\\n")',
      'print(repr(await scribe_edit("notes.txt", "ext-rel\\n")))',
      `print(repr(await scribe_edit(${abs('notes.txt')}, "ext-abs\\n")))`,
      `print(await scribe_make(${abs('made.txt')}, "made by the extension\\n"))`,
      'print(repr(open("notes.txt").read()), repr(open("made.txt").read()))',
      'try:',
      '    await cat("guard.txt")',
      '    print("cat went through")',
      'except Exception as e:',
      '    print("refused:", e)',
    ].join('\n'),
  )
  assert.equal(
    out,
    [
      "'draft\\n'",
      "'draft\\next-rel\\n'",
      'True',
      "'draft\\next-rel\\next-abs\\n' 'made by the extension\\n'",
    ].join('\n') +
      '\n' +
      'refused: cat: cat was refused by extension scribe: that file is marked forbidden\n',
  )
  // The extension's writes are the draft's: in its diff, nowhere in the real root.
  const diff = await engine.draft(s.id).changes()
  assert.deepEqual(
    diff.changes.map((c) => `${c.status} ${c.path}`),
    ['changed guard.txt', 'added made.txt', 'changed notes.txt'],
  )
  assert.match(diff.diff, /-real\n\+draft\n\+ext-rel\n\+ext-abs\n/)
  assert.match(diff.diff, /\+made by the extension\n/)
  assert.deepEqual(treeHash(root), before)

  // Back on the trunk the extension sees the real files again, and its hook lets cat through.
  await engine.draft(s.id).abandon('checked')
  const back = await run(
    engine,
    s.id,
    `print(repr(await scribe_edit(${abs('notes.txt')}, "")))\nprint((await cat("guard.txt"))["content"])`,
  )
  assert.match(back, /^'real\\n'\n1:\w+\|fine\n$/)
  assert.deepEqual(treeHash(root), before)
  assert.equal(readFileSync(join(root, 'notes.txt'), 'utf8'), 'real\n')

  // A blank draft: the extension sees the empty view, not the real files.
  await engine.draft(s.id).blank('empty')
  const blank = await run(
    engine,
    s.id,
    `try:\n    await scribe_edit(${abs('notes.txt')}, "x")\nexcept Exception as e:\n    print(e)`,
  )
  assert.match(blank, /scribe_edit: FileNotFoundError: .*No such file or directory.*notes\.txt/)
  await engine.draft(s.id).abandon()
  assert.deepEqual(treeHash(root), before)
})
