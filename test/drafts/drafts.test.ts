// Drafts with real jails, files and git: the session's primary root becomes an overlay;
// the real directory is untouched until apply.
import assert from 'node:assert/strict'
import {
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'
import { isVisError } from '../../src/util/errors.js'
import { newHome, newRepo, python, run, treeHash } from './helpers.js'

test('a draft: blocks and tools see and write the copy, the real root stays byte-identical, diff is exact, apply lands it once', async () => {
  const home = newHome()
  const root = newRepo()
  const e = await createEngine({ home, python, pool: { size: 0 } })
  try {
    const s = await e.createSession({ roots: [root], shell: true })
    const before = treeHash(root)
    const st = await e.drafts.create(s.id, 'refactor')
    assert.equal(st.mode, 'draft')
    assert.equal(st.draft?.label, 'refactor')
    assert.equal(e.sessionView(s.id).draft?.mode, 'draft')

    // The forms models write: Python file I/O, the host file tools, shell and git.
    const b = await run(
      e,
      s.id,
      `import os, json
with open('edit.txt', 'a') as f:
    f.write('line 4\\n')
os.remove('gone.txt')
os.rename('move-me.txt', 'moved.txt')
await write('sub/new.txt', 'brand new\\n')
await shell('chmod 755 keep.txt')
st = await shell('git status --porcelain')
g = await git('status', '--porcelain')
print(json.dumps({"shell": st["stdout"], "cat": (await cat('sub/new.txt'))["content"], "ls": sorted(os.listdir('.'))}))`,
    )
    const out = JSON.parse(b.stdout)
    // git inside the draft sees the draft's changes, not the real (clean) tree
    assert.match(out.shell, /^ M edit\.txt$/m)
    assert.match(out.shell, /^ D gone\.txt$/m)
    assert.match(out.shell, /^\?\? sub\/$/m)
    assert.match(out.cat, /brand new/)
    assert.ok(out.ls.includes('moved.txt') && !out.ls.includes('gone.txt'))
    assert.deepEqual(treeHash(root), before, 'the real root must not change while in a draft')

    const d = await e.drafts.diff(s.id)
    const byPath = Object.fromEntries(
      d.changes.filter((c) => !c.path.startsWith('.git/')).map((c) => [c.path, c]),
    )
    assert.deepEqual(Object.keys(byPath).sort(), [
      'edit.txt',
      'gone.txt',
      'keep.txt',
      'moved.txt',
      'sub/new.txt',
    ])
    assert.deepEqual(byPath['keep.txt'], {
      path: 'keep.txt',
      status: 'changed',
      type: 'file',
      mode: '100755',
      old_mode: '100644',
    })
    assert.match(d.diff, /diff --git a\/keep\.txt b\/keep\.txt\nold mode 100644\nnew mode 100755\n/)
    assert.equal(byPath['edit.txt']!.status, 'changed')
    assert.equal(byPath['gone.txt']!.status, 'deleted')
    assert.equal(byPath['moved.txt']!.status, 'renamed')
    assert.equal(byPath['moved.txt']!.from, 'move-me.txt')
    assert.equal(byPath['sub/new.txt']!.status, 'added')
    assert.match(
      d.diff,
      /--- a\/edit\.txt\n\+\+\+ b\/edit\.txt\n@@ -1,3 \+1,4 @@\n line 1\n line 2\n line 3\n\+line 4\n/,
    )
    assert.match(d.diff, /rename from move-me\.txt\nrename to moved\.txt/)
    assert.match(
      d.diff,
      /deleted file mode 100644\n--- a\/gone\.txt\n\+\+\+ \/dev\/null\n@@ -1 \+0,0 @@\n-to be deleted/,
    )
    assert.doesNotMatch(d.diff, /blob\.bin/)

    // The model's own view of it.
    const tool = await run(e, s.id, 'print(await draft_diff())')
    assert.match(tool.stdout, /\+line 4/)

    const applied = await e.drafts.apply(s.id)
    assert.equal(applied.status, 'applied')
    assert.equal(readFileSync(join(root, 'edit.txt'), 'utf8'), 'line 1\nline 2\nline 3\nline 4\n')
    assert.equal(readFileSync(join(root, 'sub/new.txt'), 'utf8'), 'brand new\n')
    assert.equal(readFileSync(join(root, 'moved.txt'), 'utf8'), 'moved content\n')
    assert.equal(lstatSync(join(root, 'keep.txt')).mode & 0o777, 0o755)
    assert.equal(readFileSync(join(root, 'keep.txt'), 'utf8'), 'unchanged\n')
    assert.ok(!existsSync(join(root, 'gone.txt')) && !existsSync(join(root, 'move-me.txt')))
    assert.equal(e.sessionView(s.id).draft?.mode, 'trunk')
    const landed = treeHash(root)
    const again = await e.drafts.apply(s.id)
    assert.deepEqual(again, { status: 'noop', draft: null, landed: [], kept_theirs: [] })
    assert.deepEqual(treeHash(root), landed)
    // Back on the trunk, the worker writes the real root again.
    await run(e, s.id, "open('after.txt', 'w').write('trunk')")
    assert.equal(readFileSync(join(root, 'after.txt'), 'utf8'), 'trunk')
  } finally {
    await e.close()
  }
})

test('apply refuses when the real root changed a drafted file since the draft began; theirs and ours resolve', async () => {
  const home = newHome()
  const root = newRepo()
  const e = await createEngine({ home, python, pool: { size: 0 } })
  try {
    const s = await e.createSession({ roots: [root] })
    await e.drafts.create(s.id, 'conflicting')
    await run(
      e,
      s.id,
      "open('edit.txt', 'w').write('from the draft\\n')\nopen('keep.txt', 'w').write('draft keep\\n')",
    )
    // Someone edits the real file meanwhile.
    writeFileSync(join(root, 'edit.txt'), 'from a person\n')
    await assert.rejects(e.drafts.apply(s.id), (err) => {
      assert.ok(isVisError(err, 'draft.conflict'), String(err))
      assert.deepEqual(err.context.conflicts, ['edit.txt'])
      assert.match(err.message, /edit\.txt/)
      return true
    })
    // Refused: nothing landed, still in the draft.
    assert.equal(readFileSync(join(root, 'keep.txt'), 'utf8'), 'unchanged\n')
    assert.equal((await e.drafts.state(s.id)).mode, 'draft')

    await assert.rejects(
      e.drafts.apply(s.id, { theirs: true, ours: true }),
      (err) => isVisError(err, 'draft.invalid') && /theirs or ours, not both/.test(err.message),
    )
    const r = await e.drafts.apply(s.id, { theirs: true })
    assert.deepEqual(r.kept_theirs, ['edit.txt'])
    assert.equal(readFileSync(join(root, 'edit.txt'), 'utf8'), 'from a person\n')
    assert.equal(readFileSync(join(root, 'keep.txt'), 'utf8'), 'draft keep\n')

    // ours: the draft's version wins.
    await e.drafts.create(s.id, 'second')
    await run(e, s.id, "open('edit.txt', 'w').write('draft wins\\n')")
    writeFileSync(join(root, 'edit.txt'), 'person again\n')
    await assert.rejects(e.drafts.apply(s.id), (err) => isVisError(err, 'draft.conflict'))
    await e.drafts.apply(s.id, { ours: true })
    assert.equal(readFileSync(join(root, 'edit.txt'), 'utf8'), 'draft wins\n')
  } finally {
    await e.close()
  }
})

test('abandon discards the draft without a trace and records why; refusals name the problem', async () => {
  const home = newHome()
  const root = newRepo()
  const e = await createEngine({ home, python, pool: { size: 0 } })
  try {
    const s = await e.createSession({ roots: [root] })
    const before = treeHash(root)
    await assert.rejects(e.drafts.abandon(s.id), (err) => isVisError(err, 'draft.none'))
    await assert.rejects(
      e.drafts.create(s.id, ''),
      (err) => isVisError(err, 'draft.invalid') && /label/.test(err.message),
    )
    const st = await e.drafts.create(s.id, 'throwaway')
    await assert.rejects(e.drafts.create(s.id, 'another'), (err) => isVisError(err, 'draft.exists'))
    await run(e, s.id, "import os\nopen('junk.txt', 'w').write('x')\nos.remove('keep.txt')")
    assert.equal((await e.drafts.state(s.id)).draft?.files_changed, 2)
    const dir = join(home, 'drafts', st.draft!.id)
    assert.ok(existsSync(join(dir, 'upper', 'junk.txt')))

    assert.deepEqual(await e.drafts.abandon(s.id, 'wrong approach'), { mode: 'trunk', draft: null })
    assert.ok(!existsSync(dir), 'the draft directory is removed')
    assert.deepEqual(readdirSync(join(home, 'drafts')), [])
    assert.deepEqual(treeHash(root), before)
    const rec = e.drafts.repo.list(s.id)
    assert.equal(rec.length, 1)
    assert.equal(rec[0]!.status, 'abandoned')
    assert.equal(rec[0]!.reason, 'wrong approach')
    // On the trunk again, the real files are what the worker sees.
    const b = await run(e, s.id, "import os\nprint(sorted(f for f in os.listdir('.') if f.endswith('.txt')))")
    assert.equal(b.stdout, "['edit.txt', 'gone.txt', 'keep.txt', 'move-me.txt']\n")
  } finally {
    await e.close()
  }
})

test('a blank draft starts empty; what it creates lands as additions', async () => {
  const home = newHome()
  const root = newRepo()
  const e = await createEngine({ home, python, pool: { size: 0 } })
  try {
    const s = await e.createSession({ roots: [root] })
    const draft = e.draft(s.id)
    assert.equal((await draft.blank('fresh')).draft?.kind, 'blank')
    const b = await run(e, s.id, "import os\nprint(os.listdir('.'))\nopen('only.txt', 'w').write('hi\\n')")
    assert.equal(b.stdout, '[]\n')
    const d = await draft.changes()
    assert.deepEqual(
      d.changes.map((c) => [c.path, c.status]),
      [['only.txt', 'added']],
    )
    assert.match(
      await draft.diff(),
      /^diff --git a\/only\.txt b\/only\.txt\nnew file mode 100644\n--- \/dev\/null\n\+\+\+ b\/only\.txt\n@@ -0,0 \+1 @@\n\+hi\n$/,
    )
    await draft.apply()
    assert.equal((await draft.state()).mode, 'trunk')
    assert.equal(readFileSync(join(root, 'only.txt'), 'utf8'), 'hi\n')
    assert.equal(readFileSync(join(root, 'keep.txt'), 'utf8'), 'unchanged\n')
  } finally {
    await e.close()
  }
})

test('a draft survives an engine restart: state, files and definitions come back', async () => {
  const home = newHome()
  const root = newRepo()
  const before = treeHash(root)
  const e1 = await createEngine({ home, python, pool: { size: 0 } })
  let id: string
  try {
    const s = await e1.createSession({ roots: [root] })
    id = s.id
    await e1.drafts.create(s.id, 'durable')
    await run(e1, s.id, "N = 41\nopen('wip.txt', 'w').write('work in progress\\n')")
  } finally {
    await e1.close()
  }
  const e2 = await createEngine({ home, python, pool: { size: 0 } })
  try {
    const st = await e2.drafts.state(id)
    assert.equal(st.draft?.label, 'durable')
    assert.equal(st.draft?.files_changed, 1)
    const seen: { type: string; data: unknown }[] = []
    const off = e2.subscribe(id, (ev) => seen.push(ev))
    const b = await run(
      e2,
      id,
      "print(open('wip.txt').read().strip(), N + 1)\nprint((await cat('wip.txt'))['content'])",
    )
    assert.match(b.stdout, /^work in progress 42\n1:[0-9a-f]+\|work in progress\n$/)
    off()
    const started = seen.find((ev) => ev.type === 'block.started')
    assert.ok(started)
    assert.equal((started.data as { draft: string | null }).draft, 'durable')
    assert.ok(seen.some((ev) => ev.type === 'defs.restored'))
    assert.deepEqual(treeHash(root), before)
    await e2.drafts.apply(id)
    assert.equal(readFileSync(join(root, 'wip.txt'), 'utf8'), 'work in progress\n')
  } finally {
    await e2.close()
  }
})

test('a real symlink the draft replaced by a directory is never followed out of the root, by diff or apply', async () => {
  const home = newHome()
  const root = newRepo()
  const outside = mkdtempSync(join(tmpdir(), 'vis-drafts-outside-'))
  writeFileSync(join(outside, 'f.txt'), 'SECRET outside the root\n')
  symlinkSync(outside, join(root, 'link'))
  const e = await createEngine({ home, python, pool: { size: 0 } })
  try {
    const s = await e.createSession({ roots: [root], shell: true })
    await e.drafts.create(s.id, 'links')
    // (the guest's audit hook refuses os.remove of a link that leads out; the shell may)
    const b = await run(
      e,
      s.id,
      "r = await shell('rm link && mkdir link && echo draft file > link/f.txt')\nprint(r['exit'], r['stderr'])",
    )
    assert.equal(b.stdout, '0 \n')
    const d = await e.drafts.diff(s.id)
    assert.deepEqual(
      d.changes.map((c) => `${c.status} ${c.type} ${c.path}`),
      ['deleted symlink link', 'added file link/f.txt'],
    )
    assert.doesNotMatch(d.diff, /SECRET/)
    await e.drafts.apply(s.id)
    assert.equal(readFileSync(join(outside, 'f.txt'), 'utf8'), 'SECRET outside the root\n')
    assert.deepEqual(readdirSync(outside), ['f.txt'])
    assert.ok(lstatSync(join(root, 'link')).isDirectory())
    assert.equal(readFileSync(join(root, 'link', 'f.txt'), 'utf8'), 'draft file\n')
  } finally {
    await e.close()
  }
})

test('one overlay for every jail: what shell rewrites, Python and cat see at once, even after reading it first', async () => {
  const home = newHome()
  const root = newRepo()
  const before = treeHash(root)
  const e = await createEngine({ home, python, pool: { size: 0 } })
  try {
    const s = await e.createSession({ roots: [root], shell: true })
    await e.drafts.create(s.id, 'coherent')
    const b = await run(
      e,
      s.id,
      `import json
first = open('edit.txt').read()
c1 = (await cat('keep.txt'))['content']
await shell("sed -i s/line/LINE/ edit.txt && echo more >> keep.txt && echo n > fresh.txt")
import os
print(json.dumps([first, open('edit.txt').read(), c1, (await cat('keep.txt'))['content'], os.path.exists('fresh.txt')]))`,
    )
    const [first, after, c1, c2, fresh] = JSON.parse(b.stdout)
    assert.equal(first, 'line 1\nline 2\nline 3\n')
    assert.equal(after, 'LINE 1\nLINE 2\nLINE 3\n')
    assert.match(c1, /^1:[0-9a-f]+\|unchanged$/)
    assert.match(c2, /\|unchanged\n2:[0-9a-f]+\|more$/)
    assert.equal(fresh, true)
    assert.deepEqual(treeHash(root), before)
  } finally {
    await e.close()
  }
})

test('a real file written just before the draft began is not a change since its base (the clock is coarse)', async () => {
  const home = newHome()
  const root = newRepo()
  const e = await createEngine({ home, python, pool: { size: 0 } })
  try {
    const s = await e.createSession({ roots: [root] })
    // Three times, each write immediately followed by the draft's start: within one tick of
    // the kernel's coarse ctime clock, which the base reading once shared.
    for (const round of [1, 2, 3]) {
      writeFileSync(join(root, 'edit.txt'), `person ${round}\n`)
      await e.drafts.create(s.id, `round ${round}`)
      await run(e, s.id, `open('edit.txt', 'a').write('draft ${round}\\n')`)
      const r = await e.drafts.apply(s.id)
      assert.deepEqual(r.kept_theirs ?? [], [])
      assert.equal(readFileSync(join(root, 'edit.txt'), 'utf8'), `person ${round}\ndraft ${round}\n`)
    }
  } finally {
    await e.close()
  }
})
