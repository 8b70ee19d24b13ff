// "A parent working in a draft gives its child the draft" (issue 31 §1): a sub_loop child of a
// session in a draft writes into that draft (from Python in its jail and through the host's
// write tool), never into the real root; on the trunk its writes land in the root as the
// parent's would. A child root inside the drafted root is refused (it would be the real
// directory behind the draft).
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { pyCall, type Recorded, type Scripted } from './double.js'
import { type Harness, harness } from './harness.js'

// The parent hands the writing to a child, then reads the files back itself.
function model(root: string) {
  const code =
    `open(${JSON.stringify(join(root, 'from-python.txt'))}, "w").write("py\\n")\n` +
    `await write(${JSON.stringify(join(root, 'from-tool.txt'))}, "tool\\n")\n` +
    'print("wrote" + "-ok")'
  return (req: Recorded): Scripted => {
    const b = JSON.stringify(req.body)
    if (b.includes('CHILD-WRITE') && !b.includes('PARENT-TASK')) {
      if (b.includes('wrote-ok')) return { text: 'child wrote both' }
      return { calls: [pyCall(code)] }
    }
    if (b.includes('READ' + 'BACK')) return { text: 'parent done' }
    return {
      calls: [
        pyCall(
          `print(await sub_loop("CHILD-WRITE"))\nprint("READ" + "BACK", open(${JSON.stringify(join(root, 'from-tool.txt'))}).read().strip(), open(${JSON.stringify(join(root, 'from-python.txt'))}).read().strip())`,
        ),
      ],
    }
  }
}

async function parentTurn(h: Harness) {
  const r = await h.agent.turn(h.sessionId, 'PARENT-TASK: have a helper write two files')
  assert.equal(r.status, 'done', JSON.stringify(r.error))
  const block = h.engine.getBlock(r.iterations[0]!.block_ids[0]!)
  assert.equal(block.stdout, 'child wrote both\nREADBACK tool py\n', JSON.stringify(block.error))
  assert.equal(r.children.length, 1)
  return r
}

test('a child of a session in a draft writes into the draft, not the real root; applying lands its files', async () => {
  const h = await harness()
  try {
    await h.engine.draft(h.sessionId).create('helper work')
    h.double.script([], model(h.root))
    await parentTurn(h)
    // The real root is untouched; the parent's draft holds both of the child's files.
    assert.equal(existsSync(join(h.root, 'from-python.txt')), false)
    assert.equal(existsSync(join(h.root, 'from-tool.txt')), false)
    const changes = await h.engine.draft(h.sessionId).changes()
    assert.deepEqual(changes.changes.map((c) => [c.path, c.status]).sort(), [
      ['from-python.txt', 'added'],
      ['from-tool.txt', 'added'],
    ])
    // The child's session closed without taking the draft's mount with it: a new parent worker
    // still sees the files, and applying lands them.
    await h.engine.dropWorker(h.sessionId)
    const again = await h.engine.runBlock(h.sessionId, {
      code: `open(${JSON.stringify(join(h.root, 'from-tool.txt'))}).read()`,
    })
    assert.equal(again.block.result, 'tool\n', JSON.stringify(again.block.error))
    const applied = await h.engine.draft(h.sessionId).apply()
    assert.deepEqual([...applied.landed].sort(), ['from-python.txt', 'from-tool.txt'])
    assert.equal(readFileSync(join(h.root, 'from-python.txt'), 'utf8'), 'py\n')
    assert.equal(readFileSync(join(h.root, 'from-tool.txt'), 'utf8'), 'tool\n')
  } finally {
    await h.close()
  }
})

test('a child of a session on the trunk writes into the real root', async () => {
  const h = await harness()
  try {
    h.double.script([], model(h.root))
    await parentTurn(h)
    assert.equal(readFileSync(join(h.root, 'from-python.txt'), 'utf8'), 'py\n')
    assert.equal(readFileSync(join(h.root, 'from-tool.txt'), 'utf8'), 'tool\n')
    assert.equal((await h.engine.draft(h.sessionId).state()).mode, 'trunk')
  } finally {
    await h.close()
  }
})

test('in a draft, a child given a root inside the drafted root is refused with draft.child-root-inside', async () => {
  const h = await harness()
  try {
    mkdirSync(join(h.root, 'sub'))
    await h.engine.draft(h.sessionId).create('helper work')
    h.double.script([], (req) => {
      const b = JSON.stringify(req.body)
      if (b.includes('REF' + 'USED')) return { text: 'parent done' }
      return {
        calls: [
          pyCall(
            `try:\n    await sub_loop("x", roots=[${JSON.stringify(join(h.root, 'sub'))}])\nexcept Exception as e:\n    print("REF" + "USED", e.code, str(e))`,
          ),
        ],
      }
    })
    const r = await h.agent.turn(h.sessionId, 'PARENT-TASK: narrow the helper')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    const out = h.engine.getBlock(r.iterations[0]!.block_ids[0]!).stdout ?? ''
    assert.match(out, /^REFUSED draft\.child-root-inside .*draft "helper work".*apply the draft first/)
    // No child turn started.
    assert.equal(r.children.length, 0)
  } finally {
    await h.close()
  }
})

test('a session lent its parent’s draft sees it, but only the owner applies, abandons or replaces it', async () => {
  const h = await harness()
  try {
    await h.engine.draft(h.sessionId).create('owned')
    const made = await h.engine.runBlock(h.sessionId, {
      code: `open(${JSON.stringify(join(h.root, 'a.txt'))}, "w").write("a\\n")`,
    })
    assert.equal(made.block.error, null, JSON.stringify(made.block.error))
    const child = await h.engine.createSession(
      { roots: [h.root] },
      { within: [h.root], draftOf: h.sessionId },
    )
    const mine = await h.engine.draft(h.sessionId).state()
    const lent = await h.engine.draft(child.id).state()
    assert.equal(lent.mode, 'draft')
    assert.equal(lent.draft?.id, mine.draft?.id)
    assert.deepEqual(
      (await h.engine.draft(child.id).changes()).changes.map((c) => c.path),
      ['a.txt'],
    )
    for (const op of [
      () => h.engine.draft(child.id).apply(),
      () => h.engine.draft(child.id).abandon('no'),
      () => h.engine.draft(child.id).create('mine'),
    ]) {
      await assert.rejects(op(), (err: { code?: string; message?: string }) => {
        assert.equal(err.code, 'draft.lent')
        assert.match(err.message ?? '', new RegExp(`parent session ${h.sessionId}`))
        return true
      })
    }
    // The child's block sees the draft, not the real root (where a.txt does not exist).
    writeFileSync(join(h.root, 'real-only.txt'), 'real\n')
    const seen = await h.engine.runBlock(child.id, {
      code: `import os\nsorted(n for n in os.listdir(${JSON.stringify(h.root)}) if n.endswith(".txt"))`,
    })
    assert.deepEqual(seen.block.result, ['a.txt', 'real-only.txt'])
    assert.equal(existsSync(join(h.root, 'a.txt')), false)
    // Closing the child leaves the parent's draft whole and working.
    await h.engine.closeSession(child.id)
    await h.engine.dropWorker(h.sessionId)
    const back = await h.engine.runBlock(h.sessionId, {
      code: `open(${JSON.stringify(join(h.root, 'a.txt'))}).read()`,
    })
    assert.equal(back.block.result, 'a\n', JSON.stringify(back.block.error))
    assert.deepEqual((await h.engine.draft(h.sessionId).apply()).landed, ['a.txt'])
  } finally {
    await h.close()
  }
})
