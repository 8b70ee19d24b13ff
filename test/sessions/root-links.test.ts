// A symlink in a root that points outside (issue 30, section 8), through a real jailed
// session: the block may delete or rename the link itself (its target is untouched); reading
// through it, moving it out of the roots and deleting through a directory link stay refused.
import assert from 'node:assert/strict'
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import { python, tempHome } from './helpers.js'

let rt: Runtime
const made: string[] = []
before(async () => {
  const { home } = tempHome('root-links')
  rt = await createRuntime({ home, python, pool: { size: 0 }, defaultTools: false })
})
after(async () => {
  await rt.close()
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

test('deleting and renaming an in-root link to outside works; the target stays; escapes stay refused', async () => {
  const root = mkdtempSync(join(tmpdir(), 'vis-links-root-'))
  const outside = mkdtempSync(join(tmpdir(), 'vis-links-outside-'))
  made.push(root, outside)
  mkdirSync(join(outside, 'dir'))
  writeFileSync(join(outside, 'secret.txt'), 'secret')
  writeFileSync(join(outside, 'dir', 'victim.txt'), 'victim')
  for (const n of ['del', 'ren', 'keep']) symlinkSync(join(outside, 'secret.txt'), join(root, n))
  symlinkSync(join(outside, 'dir'), join(root, 'dirlink'))
  const s = await rt.createSession({ roots: [root] })
  const q = JSON.stringify
  const r = await s.runBlock(
    `import os, json
out = {}
def attempt(name, fn):
    try:
        fn()
        out[name] = 'ok'
    except OSError as e:
        out[name] = type(e).__name__ + ': ' + str(e)
attempt('unlink', lambda: os.unlink(${q(join(root, 'del'))}))
attempt('rename', lambda: os.rename(${q(join(root, 'ren'))}, ${q(join(root, 'moved'))}))
attempt('read', lambda: open(${q(join(root, 'keep'))}).read())
attempt('rename-out', lambda: os.rename(${q(join(root, 'keep'))}, '/tmp/out'))
attempt('remove-through-dir-link', lambda: os.remove(${q(join(root, 'dirlink', 'victim.txt'))}))
print(json.dumps(out))`,
  )
  assert.equal(r.error, undefined, JSON.stringify(r.error))
  const out = JSON.parse((r.stdout ?? '').trim())
  assert.equal(out.unlink, 'ok')
  assert.equal(out.rename, 'ok')
  assert.match(out.read, /^PermissionError: vis: reading .*keep' \(resolves to/)
  assert.match(out['rename-out'], /^PermissionError: .*outside the read-write roots \[os\.rename\]/)
  assert.match(out['remove-through-dir-link'], /^PermissionError: .*victim\.txt.*\[os\.remove\]/)
  assert.throws(() => lstatSync(join(root, 'del')), { code: 'ENOENT' })
  assert.equal(lstatSync(join(root, 'moved')).isSymbolicLink(), true)
  assert.equal(lstatSync(join(root, 'keep')).isSymbolicLink(), true)
  assert.equal(readFileSync(join(outside, 'secret.txt'), 'utf8'), 'secret')
  assert.equal(readFileSync(join(outside, 'dir', 'victim.txt'), 'utf8'), 'victim')
  await s.dispose()
})
