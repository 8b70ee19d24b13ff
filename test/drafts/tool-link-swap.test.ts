// Issue 30 §2: the host file tools (cat, grep, ls, patch, write) run in the host process, on a
// root the sandbox writes. At the point between a tool's path check and its open a test-only
// hook (src/util/check-use-hook.ts) swaps the directory `sub` for a symlink, in a plain root
// and inside a draft (through the draft's own overlay, as a block would). A link to a host
// directory is refused; in a draft, a link to the root's own absolute path leads to the
// draft's files, never to the real root behind it.
import assert from 'node:assert/strict'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { draftMountPid } from '../../src/confinement/draft-mount.js'
import { createEngine, type Engine } from '../../src/engine/index.js'
import { setCheckUseHook } from '../../src/util/check-use-hook.js'
import { newHome, newRepo, python, run, treeHash } from './helpers.js'

const SECRET = 'TOP-SECRET-tools-5ca1ab1e'

const ATTEMPT = `import json
async def attempt(call):
    try:
        return {"ok": await call}
    except Exception as e:
        return {"code": getattr(e, "code", None), "message": str(e)}
`

// Each tool call the model could make on sub/: the path it checks is inside the root.
const CALLS: Record<string, string> = {
  cat: "cat('sub/a.txt')",
  grep: "grep('SECRET', paths=['sub'])",
  ls: "ls('sub')",
  patch: `patch([{"path": "sub/a.txt", "search": "${SECRET}", "replace": "PWNED"}])`,
  write: "write('sub/a.txt', 'PWNED\\n')",
}

function hostSecretDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vis-tools-secret-'))
  writeFileSync(join(dir, 'a.txt'), `${SECRET}\n`)
  chmodSync(join(dir, 'a.txt'), 0o600)
  return dir
}

// Runs one tool call while the hook swaps `<view>/sub` for a link to `target` at the first
// check/use point of that call; its result (or refusal) as the guest saw it.
async function swappedCall(
  e: Engine,
  sessionId: string,
  view: () => Promise<string>,
  call: string,
  target: string,
) {
  const v = await view()
  rmSync(join(v, 'sub'), { recursive: true, force: true })
  mkdirSync(join(v, 'sub'))
  writeFileSync(join(v, 'sub', 'a.txt'), 'inside a\n')
  let swapped = false
  setCheckUseHook(() => {
    if (swapped) return
    renameSync(join(v, 'sub'), join(v, 'sub.checked'))
    symlinkSync(target, join(v, 'sub'))
    swapped = true
  })
  try {
    const b = await run(e, sessionId, `${ATTEMPT}print(json.dumps(await attempt(${call})))`)
    assert.ok(swapped, 'the swap landed between the check and the use')
    rmSync(join(v, 'sub.checked'), { recursive: true, force: true })
    return { out: JSON.parse(b.stdout) as { ok?: unknown; code?: string; message?: string }, raw: b.stdout }
  } finally {
    setCheckUseHook(undefined)
  }
}

async function insideDraft(e: Engine, sessionId: string, root: string): Promise<string> {
  const o = e.drafts.overlayFor(sessionId)
  assert.ok(o)
  return `/proc/${await draftMountPid(o)}/root${root}`
}

for (const where of ['plain root', 'draft'] as const) {
  test(`host tools in a ${where}: sub swapped for a link to a host directory at the check/use point is refused`, async () => {
    const home = newHome()
    const root = newRepo()
    const secret = hostSecretDir()
    const e = await createEngine({ home, python, pool: { size: 0 } })
    try {
      const s = await e.createSession({ roots: [root] })
      if (where === 'draft') await e.drafts.create(s.id, 'tools')
      const view = where === 'draft' ? () => insideDraft(e, s.id, root) : async () => root
      for (const [tool, call] of Object.entries(CALLS)) {
        const { out, raw } = await swappedCall(e, s.id, view, call, secret)
        assert.ok(!raw.includes(SECRET), `${tool} showed the host file: ${raw}`)
        assert.equal(out.code, 'tool.path-denied', `${tool}: ${raw}`)
        assert.match(out.message!, /outside the allowed roots/, tool)
      }
      assert.equal(readFileSync(join(secret, 'a.txt'), 'utf8'), `${SECRET}\n`)
      assert.deepEqual(readdirSync(secret), ['a.txt'], 'nothing was written beside the host file')
    } finally {
      await e.close()
    }
  })
}

test("host tools in a draft: a link to the root's own path leads to the draft's files, never the real root", async () => {
  const home = newHome()
  const root = newRepo()
  const e = await createEngine({ home, python, pool: { size: 0 } })
  try {
    const s = await e.createSession({ roots: [root] })
    await e.drafts.create(s.id, 'self-link')
    await run(
      e,
      s.id,
      "open('edit.txt', 'w').write('draft edit SECRET\\n')\nopen('only-draft.txt', 'w').write('x\\n')",
    )
    const before = treeHash(root)
    const view = () => insideDraft(e, s.id, root)
    // Reads see the draft's version through the link.
    const cat = await swappedCall(e, s.id, view, "cat('sub/edit.txt')", root)
    assert.match(JSON.stringify(cat.out.ok), /draft edit SECRET/, cat.raw)
    const ls = await swappedCall(e, s.id, view, "ls('sub', depth=1)", root)
    assert.match(JSON.stringify(ls.out.ok), /only-draft\.txt/, ls.raw)
    const grep = await swappedCall(e, s.id, view, "grep('draft edit', paths=['sub'])", root)
    assert.match(JSON.stringify(grep.out.ok), /edit\.txt/, grep.raw)
    // Writes land in the draft, not behind it.
    const w = await swappedCall(e, s.id, view, "write('sub/escaped.txt', 'via link\\n')", root)
    assert.ok(w.out.ok, w.raw)
    const deep = await swappedCall(e, s.id, view, "write('sub/newdir/deep.txt', 'deep\\n')", root)
    assert.ok(deep.out.ok, deep.raw)
    const p = await swappedCall(
      e,
      s.id,
      view,
      'patch([{"path": "sub/keep.txt", "search": "unchanged", "replace": "patched in the draft"}])',
      root,
    )
    assert.ok(p.out.ok, p.raw)
    assert.deepEqual(treeHash(root), before, 'the real root changed behind the draft')
    assert.equal(existsSync(join(root, 'escaped.txt')), false)
    const v = await view()
    assert.equal(readFileSync(join(v, 'escaped.txt'), 'utf8'), 'via link\n')
    assert.equal(readFileSync(join(v, 'newdir', 'deep.txt'), 'utf8'), 'deep\n')
    assert.equal(existsSync(join(root, 'newdir')), false)
    assert.equal(readFileSync(join(v, 'keep.txt'), 'utf8'), 'patched in the draft\n')
  } finally {
    await e.close()
  }
})

test('grep through ripgrep: a directory swapped for a link after ripgrep read it is not shown from outside', async () => {
  const home = newHome()
  const root = newRepo()
  const secret = mkdtempSync(join(tmpdir(), 'vis-tools-secret-'))
  writeFileSync(join(secret, 'a.txt'), `MARK ${SECRET}\n`)
  mkdirSync(join(root, 'sub'))
  writeFileSync(join(root, 'sub', 'a.txt'), 'MARK inside\n')
  const e = await createEngine({ home, python, pool: { size: 0 } })
  try {
    const s = await e.createSession({ roots: [root] })
    let swapped = false
    // ripgrep walks by name; its report is confirmed file by file beneath the verified
    // target. The swap lands between the two.
    setCheckUseHook((point) => {
      if (point !== 'grep.confirm' || swapped) return
      renameSync(join(root, 'sub'), join(root, 'sub.read'))
      symlinkSync(secret, join(root, 'sub'))
      swapped = true
    })
    const b = await run(e, s.id, `import json\nprint(json.dumps(await grep('MARK')))`)
    assert.ok(swapped)
    const r = JSON.parse(b.stdout)
    assert.equal(r.engine, 'ripgrep')
    assert.ok(!b.stdout.includes(SECRET), b.stdout)
    assert.deepEqual(r.hits, [], b.stdout)
  } finally {
    setCheckUseHook(undefined)
    await e.close()
  }
})

for (const where of ['plain root', 'draft'] as const) {
  test(`attachments in a ${where}: a link to a host file, attached or dropped in the outbox, carries nothing of it`, async () => {
    const home = newHome()
    const root = newRepo()
    const secret = hostSecretDir()
    const e = await createEngine({ home, python, pool: { size: 0 } })
    try {
      const s = await e.createSession({ roots: [root] })
      if (where === 'draft') await e.drafts.create(s.id, 'attach')
      const view = where === 'draft' ? await insideDraft(e, s.id, root) : root
      symlinkSync(join(secret, 'a.txt'), join(view, 'leak.txt'))
      // The guest opens what it attaches inside its jail, where no host file exists.
      const r = await e.runBlock(s.id, {
        code: `import os\nos.symlink(${JSON.stringify(join(secret, 'a.txt'))}, os.path.join(os.environ["VIS_OUTBOX"], "out.txt"))\nvis_attach('leak.txt')`,
      })
      assert.ok(r.block.error, 'attaching a link to a host file fails inside the jail')
      assert.match(r.block.error.message, /No such file|not permitted|denied/)
      for (const a of r.block.attachments) {
        const { data } = e.attachment(s.id, a.id)
        assert.ok(!data.toString('latin1').includes(SECRET))
      }
      assert.ok(!JSON.stringify(r.block).includes(SECRET))
    } finally {
      await e.close()
    }
  })
}
