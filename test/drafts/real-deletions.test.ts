// Deletions a draft must not lose or bring back: a directory the draft deleted and made
// again (overlayfs marks it opaque: nothing of the real root below shows through), and a
// real file the real root deleted after the draft began while the draft changed it.
import assert from 'node:assert/strict'
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { loadConfineAddon } from '../../src/confinement/native.js'
import { createEngine } from '../../src/engine/index.js'
import { isVisError } from '../../src/util/errors.js'
import { newHome, newRepo, python, run, treeHash } from './helpers.js'

const summary = (changes: { path: string; status: string; from?: string }[]) =>
  changes.map((c) => `${c.status} ${c.from ? `${c.from} -> ` : ''}${c.path}`)

test('a directory deleted and made again: the real files below it the draft did not recreate are deleted, in diff and on apply', async () => {
  const home = newHome()
  const root = newRepo()
  mkdirSync(join(root, 'pkg', 'sub', 'deep'), { recursive: true })
  writeFileSync(join(root, 'pkg', 'a.py'), 'A = 1\n')
  writeFileSync(join(root, 'pkg', 'same.txt'), 'same\n')
  writeFileSync(join(root, 'pkg', 'sub', 'b.py'), 'B = 2\n')
  writeFileSync(join(root, 'pkg', 'sub', 'deep', 'c.txt'), 'c\n')
  mkdirSync(join(root, 'other'))
  writeFileSync(join(root, 'other', 'x.txt'), 'x\n')
  writeFileSync(join(root, 'other', 'y.txt'), 'y\n')
  const before = treeHash(root)
  const e = await createEngine({ home, python, pool: { size: 0 } })
  try {
    const s = await e.createSession({ roots: [root] })
    const st = await e.drafts.create(s.id, 'regenerate pkg')
    // The forms a model writes: rmtree then makedirs; one file back with new content, one
    // identical, one new; a sibling directory where one file is deleted the plain way.
    const b = await run(
      e,
      s.id,
      [
        'import os, shutil',
        "shutil.rmtree('pkg')",
        "os.makedirs('pkg/sub')",
        "open('pkg/a.py', 'w').write('A = 10\\n')",
        "open('pkg/same.txt', 'w').write('same\\n')",
        "open('pkg/new.py', 'w').write('NEW = 3\\n')",
        "os.remove('other/x.txt')",
        "print(sorted(os.listdir('pkg')), os.listdir('pkg/sub'))",
      ].join('\n'),
    )
    // The draft's own view: nothing of the old pkg shows through.
    assert.equal(b.stdout, "['a.py', 'new.py', 'same.txt', 'sub'] []\n")
    // It is the opaque-directory case: overlayfs marked the recreated directory.
    const upperPkg = join(home, 'drafts', st.draft!.id, 'upper', 'pkg')
    const addon = loadConfineAddon()!
    assert.equal(addon.getXattr(upperPkg, 'user.overlay.opaque')?.toString(), 'y')
    assert.equal(addon.getXattr(join(upperPkg, 'new.py'), 'user.overlay.opaque'), null)
    assert.throws(
      () => addon.getXattr(join(upperPkg, 'no-such-file'), 'user.overlay.opaque'),
      (err: Error & { errno?: number }) => err.errno === 2 && /No such file/.test(err.message),
    )

    const d = await e.draft(s.id).changes()
    assert.deepEqual(summary(d.changes), [
      'deleted other/x.txt',
      'changed pkg/a.py',
      'added pkg/new.py',
      'deleted pkg/sub/b.py',
      'deleted pkg/sub/deep/c.txt',
    ])
    assert.match(
      d.diff,
      /^diff --git a\/pkg\/sub\/deep\/c\.txt b\/pkg\/sub\/deep\/c\.txt\ndeleted file mode 100644$/m,
    )
    assert.match(d.diff, /^-B = 2$/m)
    assert.deepEqual(treeHash(root), before, 'the real root is untouched until apply')

    const r = await e.drafts.apply(s.id)
    assert.deepEqual(r.landed.sort(), [
      'other/x.txt',
      'pkg/a.py',
      'pkg/new.py',
      'pkg/sub/b.py',
      'pkg/sub/deep/c.txt',
    ])
    assert.equal(readFileSync(join(root, 'pkg', 'a.py'), 'utf8'), 'A = 10\n')
    assert.equal(readFileSync(join(root, 'pkg', 'new.py'), 'utf8'), 'NEW = 3\n')
    assert.equal(readFileSync(join(root, 'pkg', 'same.txt'), 'utf8'), 'same\n')
    assert.equal(existsSync(join(root, 'pkg', 'sub', 'b.py')), false)
    assert.equal(
      existsSync(join(root, 'pkg', 'sub', 'deep')),
      false,
      'a directory the deletions emptied goes',
    )
    assert.equal(existsSync(join(root, 'other', 'x.txt')), false)
    assert.equal(readFileSync(join(root, 'other', 'y.txt'), 'utf8'), 'y\n')
    // Applied: the real root now matches what the draft showed.
    assert.equal(await e.draft(s.id).diff(), '')
  } finally {
    await e.close()
  }
})

test('a real file deleted after the draft began that the draft changed is a conflict; theirs keeps it deleted', async () => {
  const home = newHome()
  const root = newRepo()
  mkdirSync(join(root, 'docs'))
  writeFileSync(join(root, 'docs', 'guide.md'), '# Guide\n')
  const e = await createEngine({ home, python, pool: { size: 0 } })
  try {
    const s = await e.createSession({ roots: [root] })
    await e.drafts.create(s.id, 'edits')
    // Changed in place (a copy-up), saved the way editors and tools save (a new file renamed
    // over the old: overlayfs marks no copy-up on it), and a new file in a directory the
    // real root leaves alone.
    await run(
      e,
      s.id,
      [
        'import os',
        "open('edit.txt', 'a').write('line 4\\n')",
        "open('docs/guide.md.tmp', 'w').write('# Guide, rewritten\\n')",
        "os.replace('docs/guide.md.tmp', 'docs/guide.md')",
        "os.makedirs('notes')",
        "open('notes/todo.md', 'w').write('- ship\\n')",
        "open('keep.txt', 'w').write('draft keep\\n')",
      ].join('\n'),
    )
    // A person deletes both real files meanwhile, and one the draft never touched.
    rmSync(join(root, 'edit.txt'))
    rmSync(join(root, 'docs', 'guide.md'))
    rmSync(join(root, 'blob.bin'))
    await assert.rejects(e.drafts.apply(s.id), (err) => {
      assert.ok(isVisError(err, 'draft.conflict'), String(err))
      assert.deepEqual(err.context.conflicts, ['docs/guide.md', 'edit.txt'])
      assert.match(err.message, /docs\/guide\.md, edit\.txt/)
      return true
    })
    // Refused: nothing landed, still in the draft, the deletions stand.
    assert.equal(readFileSync(join(root, 'keep.txt'), 'utf8'), 'unchanged\n')
    assert.equal(existsSync(join(root, 'notes')), false)
    assert.equal(existsSync(join(root, 'edit.txt')), false)
    assert.equal((await e.drafts.state(s.id)).mode, 'draft')

    const r = await e.drafts.apply(s.id, { theirs: true })
    assert.deepEqual(r.kept_theirs, ['docs/guide.md', 'edit.txt'])
    assert.equal(existsSync(join(root, 'edit.txt')), false, 'theirs: the real deletion stands')
    assert.equal(existsSync(join(root, 'docs', 'guide.md')), false)
    assert.equal(existsSync(join(root, 'blob.bin')), false, 'a file the draft never touched stays deleted')
    assert.equal(readFileSync(join(root, 'keep.txt'), 'utf8'), 'draft keep\n')
    assert.equal(
      readFileSync(join(root, 'notes', 'todo.md'), 'utf8'),
      '- ship\n',
      'a new file is no conflict',
    )
  } finally {
    await e.close()
  }
})

test('ours writes the draft version of a file the real root deleted; what the draft knew was new survives a restart; shared deletions are no conflict', async () => {
  const home = newHome()
  const root = newRepo()
  const e1 = await createEngine({ home, python, pool: { size: 0 } })
  let id: string
  try {
    const s = await e1.createSession({ roots: [root] })
    id = s.id
    await e1.drafts.create(s.id, 'edits')
    await run(
      e1,
      s.id,
      "import os\nopen('edit.txt', 'w').write('draft version\\n')\nos.remove('gone.txt')\nopen('fresh.txt', 'w').write('fresh\\n')",
    )
  } finally {
    await e1.close()
  }
  // While no server runs: the real file the draft changed is deleted, and the one the draft
  // deleted too (both sides agree: no conflict). The root directory has changed since the
  // base now: that fresh.txt was new is known only from what the draft recorded before.
  rmSync(join(root, 'edit.txt'))
  rmSync(join(root, 'gone.txt'))
  const e2 = await createEngine({ home, python, pool: { size: 0 } })
  try {
    await assert.rejects(e2.drafts.apply(id), (err) => {
      assert.ok(isVisError(err, 'draft.conflict'), String(err))
      assert.deepEqual(err.context.conflicts, ['edit.txt'])
      return true
    })
    const r = await e2.drafts.apply(id, { ours: true })
    assert.deepEqual(r.kept_theirs, [])
    assert.equal(readFileSync(join(root, 'edit.txt'), 'utf8'), 'draft version\n')
    assert.equal(readFileSync(join(root, 'fresh.txt'), 'utf8'), 'fresh\n')
    assert.equal(existsSync(join(root, 'gone.txt')), false)

    // Without any real deletion a draft that adds files applies with no refusal.
    await e2.drafts.create(id, 'additions')
    await run(
      e2,
      id,
      "import os\nos.makedirs('a/b')\nopen('a/b/c.txt', 'w').write('c\\n')\nopen('top.txt', 'w').write('t\\n')",
    )
    const r2 = await e2.drafts.apply(id)
    assert.deepEqual(r2.landed.sort(), ['a/b/c.txt', 'top.txt'])
  } finally {
    await e2.close()
  }
})

test('a file the draft first wrote after the real directory changed cannot be told from a deletion: apply asks', async () => {
  const home = newHome()
  const root = newRepo()
  const e = await createEngine({ home, python, pool: { size: 0 } })
  try {
    const s = await e.createSession({ roots: [root] })
    await e.drafts.create(s.id, 'late')
    await run(e, s.id, "open('early.txt', 'w').write('early\\n')")
    // A person adds a file: the root directory's entries changed since the base.
    writeFileSync(join(root, 'person.txt'), 'by hand\n')
    await run(e, s.id, "open('late.txt', 'w').write('late\\n')")
    // early.txt was seen missing while the root was unchanged: known new. late.txt was not.
    await assert.rejects(e.drafts.apply(s.id), (err) => {
      assert.ok(isVisError(err, 'draft.conflict'), String(err))
      assert.deepEqual(err.context.conflicts, ['late.txt'])
      return true
    })
    const r = await e.drafts.apply(s.id, { ours: true })
    assert.deepEqual(r.landed.sort(), ['early.txt', 'late.txt'])
    assert.equal(readFileSync(join(root, 'late.txt'), 'utf8'), 'late\n')
    assert.equal(readFileSync(join(root, 'person.txt'), 'utf8'), 'by hand\n')
  } finally {
    await e.close()
  }
})

test('a recreated directory holding a real symlink to outside the root: the link alone is deleted, nothing it points at', async () => {
  const home = newHome()
  const root = newRepo()
  const outside = mkdtempSync(join(tmpdir(), 'vis-drafts-outside-'))
  writeFileSync(join(outside, 'precious.txt'), 'keep me\n')
  mkdirSync(join(root, 'pkg'))
  writeFileSync(join(root, 'pkg', 'a.py'), 'A = 1\n')
  symlinkSync(outside, join(root, 'pkg', 'elsewhere'))
  const e = await createEngine({ home, python, pool: { size: 0 } })
  try {
    const s = await e.createSession({ roots: [root], shell: true })
    await e.drafts.create(s.id, 'regenerate')
    // The guest refuses to unlink a link that leads outside its roots; a shell in the jail may.
    const r = await run(
      e,
      s.id,
      "r = await shell('rm -rf pkg && mkdir pkg && echo \"B = 2\" > pkg/b.py')\nprint(r['exit'], r['stderr'])",
    )
    assert.equal(r.stdout, '0 \n')
    const d = await e.draft(s.id).changes()
    assert.deepEqual(
      d.changes.map((c) => `${c.status} ${c.type} ${c.path}`),
      ['deleted file pkg/a.py', 'added file pkg/b.py', 'deleted symlink pkg/elsewhere'],
    )
    await e.drafts.apply(s.id)
    assert.equal(lstatSync(join(root, 'pkg', 'elsewhere'), { throwIfNoEntry: false }), undefined)
    assert.equal(readFileSync(join(outside, 'precious.txt'), 'utf8'), 'keep me\n')
    assert.equal(readFileSync(join(root, 'pkg', 'b.py'), 'utf8'), 'B = 2\n')
  } finally {
    await e.close()
  }
})
