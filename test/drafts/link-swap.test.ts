// Issue 30 §2: the host reads and writes a draft's files on trees the sandbox can change
// between any two system calls. Each attack swaps a symlink to a host file (or directory)
// outside every root in at the exact point between the host's check and its use: a test-only
// hook (src/util/check-use-hook.ts) pauses the host there and performs the swap through the
// draft's own overlay mount, as a block inside the draft would. The secret never crosses.
import assert from 'node:assert/strict'
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { draftMountPid } from '../../src/confinement/draft-mount.js'
import type { Engine } from '../../src/engine/index.js'
import { createEngine } from '../../src/engine/index.js'
import { startServer } from '../../src/http/server.js'
import { setCheckUseHook } from '../../src/util/check-use-hook.js'
import { client } from '../http/helpers.js'
import { newHome, newRepo, python, run } from './helpers.js'

const SECRET = 'TOP-SECRET-c0ffee-host-only'

// A root-owned (the test's user's) 0600 file outside every root, in a directory of its own.
function hostSecret(): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'vis-host-secret-'))
  const file = join(dir, 'f.txt')
  writeFileSync(file, `${SECRET}\n`)
  chmodSync(file, 0o600)
  return { dir, file }
}

// The draft's root as the sandbox sees it: through the mount holder's namespace, where the
// overlay is mounted at the root's own path. Writing here is writing from inside the draft.
async function insideDraft(e: Engine, sessionId: string, root: string): Promise<string> {
  const o = e.drafts.overlayFor(sessionId)
  assert.ok(o, 'the session is in a draft')
  return `/proc/${await draftMountPid(o)}/root${root}`
}

type Swap = 'file-for-link' | 'dir-for-link'

// d/f.txt is a regular file when the host checks it; at the hook it becomes a symlink to the
// secret: either d is replaced by a directory whose f.txt is that link (the attack),
// or d itself by a link to the secret's directory.
function swap(view: string, how: Swap, secret: { dir: string; file: string }): void {
  renameSync(join(view, 'd'), join(view, 'd.old'))
  if (how === 'file-for-link') {
    mkdirSync(join(view, 'd.new'))
    symlinkSync(secret.file, join(view, 'd.new', 'f.txt'))
    renameSync(join(view, 'd.new'), join(view, 'd'))
  } else symlinkSync(secret.dir, join(view, 'd'))
}

// Installs a hook that swaps once, when the host is about to read d/f.txt at `point`.
function swapAt(
  point: string,
  view: () => Promise<string>,
  how: Swap,
  secret: { dir: string; file: string },
) {
  const state = { swapped: false }
  setCheckUseHook(async (p, rel) => {
    if (p !== point || state.swapped || !rel.endsWith('d/f.txt')) return
    swap(await view(), how, secret)
    state.swapped = true
  })
  return state
}

// Every entry below root, links not followed: [relative path, kind, content of regular files].
function realTree(root: string): [string, string, string][] {
  const out: [string, string, string][] = []
  const walk = (rel: string) => {
    for (const name of readdirSync(join(root, rel))) {
      const p = rel ? `${rel}/${name}` : name
      if (p === '.git') continue
      const st = lstatSync(join(root, p))
      if (st.isDirectory()) walk(p)
      else
        out.push([
          p,
          st.isSymbolicLink() ? 'link' : 'file',
          st.isFile() ? readFileSync(join(root, p), 'utf8') : '',
        ])
    }
  }
  walk('')
  return out
}

for (const how of ['file-for-link', 'dir-for-link'] as Swap[]) {
  test(`draft_diff: a ${how} swap between the host's check and its read never shows the host file`, async () => {
    const home = newHome()
    const root = newRepo()
    const secret = hostSecret()
    const e = await createEngine({ home, python, pool: { size: 0 } })
    try {
      const s = await e.createSession({ roots: [root] })
      await e.drafts.create(s.id, 'swap')
      await run(e, s.id, "import os\nos.makedirs('d')\nopen('d/f.txt', 'w').write('draft text\\n')")
      const state = swapAt('draft.diff.read', () => insideDraft(e, s.id, root), how, secret)
      let r: Awaited<ReturnType<Engine['runBlock']>>
      try {
        r = await e.runBlock(s.id, { code: 'print(await draft_diff())' })
      } finally {
        setCheckUseHook(undefined)
      }
      assert.ok(state.swapped, 'the swap landed between the check and the read')
      const seen = JSON.stringify(r.block)
      assert.ok(!seen.includes(SECRET), `the host file's content reached the draft: ${seen}`)
      // A clear refusal that says what happened and names no host path.
      assert.ok(r.block.error, 'the diff is refused')
      assert.match(r.block.error.message, /changed while the draft was being read/)
      assert.ok(!r.block.error.message.includes(home) && !r.block.error.message.includes(tmpdir()))

      // Once the draft holds still, the link is shown as a link: its target, not what it names.
      const d = await e.drafts.diff(s.id)
      assert.ok(!d.diff.includes(SECRET))
      const linkPath = how === 'file-for-link' ? 'd/f.txt' : 'd'
      assert.ok(
        d.changes.some((c) => c.path === linkPath && c.type === 'symlink' && c.mode === '120000'),
        JSON.stringify(d.changes),
      )
      assert.match(
        d.diff,
        new RegExp(`\\+${(how === 'file-for-link' ? secret.file : secret.dir).replaceAll('/', '\\/')}\\n`),
      )
    } finally {
      setCheckUseHook(undefined)
      await e.close()
    }
  })

  test(`apply over HTTP: a ${how} swap between the check and the copy lands nothing, leaves no temp file, answers 409`, async () => {
    const home = newHome()
    const root = newRepo()
    const secret = hostSecret()
    const server = await startServer({ home, python, port: 0, pool: { size: 0 } })
    const call = client(server.url)
    try {
      const s = await call('POST', '/v1/sessions', { roots: [root] })
      assert.equal(s.status, 201, s.text)
      const id: string = s.body.id
      assert.equal((await call('POST', `/v1/sessions/${id}/draft`, { label: 'swap' })).status, 201)
      const b = await call('POST', `/v1/sessions/${id}/blocks`, {
        code: "import os\nos.makedirs('d')\nopen('d/f.txt', 'w').write('draft text\\n')",
      })
      assert.equal(b.body.status, 'done', b.text)
      const before = realTree(root)
      const state = swapAt('draft.apply.read', () => insideDraft(server.engine, id, root), how, secret)
      let a: Awaited<ReturnType<typeof call>>
      try {
        a = await call('POST', `/v1/sessions/${id}/draft/apply`, {})
      } finally {
        setCheckUseHook(undefined)
      }
      assert.ok(state.swapped, 'the swap landed between the check and the copy')
      assert.equal(a.status, 409, a.text)
      assert.equal(a.body.error.code, 'draft.changed')
      assert.ok(!a.text.includes(home) && !a.text.includes(secret.dir) && !a.text.includes(SECRET), a.text)
      const after = realTree(root)
      assert.ok(!JSON.stringify(after).includes(SECRET), 'the secret was copied into the real root')
      assert.deepEqual(
        after.filter(([p]) => p.split('/').some((n) => n.startsWith('.vis-draft-'))),
        [],
        'no temp file is left in the real root',
      )
      assert.deepEqual(
        after.filter(([p]) => p.startsWith('d/') || p === 'd'),
        [],
        'nothing of the swapped path landed',
      )
      assert.deepEqual(
        after.filter(([p]) => !p.startsWith('d')),
        before,
      )
      // The draft is still there to look at or abandon.
      assert.equal((await call('GET', `/v1/sessions/${id}/draft`)).body.mode, 'draft')
      assert.equal((await call('POST', `/v1/sessions/${id}/draft/abandon`, {})).status, 200)
    } finally {
      setCheckUseHook(undefined)
      await server.close()
    }
  })
}
