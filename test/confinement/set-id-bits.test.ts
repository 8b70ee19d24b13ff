import assert from 'node:assert/strict'
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createEngine, type Engine } from '../../src/engine/index.js'
import { python } from '../sessions/helpers.js'

// The seccomp filter refuses set-id bits on any file a block makes or changes (the roots are
// nosuid only inside the jail; on the host such a file is a set-id program of the host user),
// in the worker and in the tool jails, while ordinary modes, directories and files still work.
let engine: Engine
let home: string
const made: string[] = []
before(async () => {
  home = mkdtempSync(join(tmpdir(), 'vis-setid-home-'))
  made.push(home)
  process.env.VIS_HOME = home
  engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
})
after(async () => {
  await engine.close()
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

function newRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'vis-setid-root-'))
  chmodSync(root, 0o755)
  made.push(root)
  return root
}

const mode = (p: string) => statSync(p).mode & 0o7777

// Each line runs one call in the guest and reports 'ok' or its errno name.
const PROBE = `
import errno, os, stat
def attempt(f):
    try:
        f()
        return 'ok'
    except OSError as e:
        # The audit hook's readable refusal carries no errno; the kernel's is EPERM.
        return errno.errorcode.get(e.errno, str(e.errno)) if e.errno else f'hook: {e}'
open('f', 'w').write('x')
out = {
    'chmod 755': attempt(lambda: os.chmod('f', 0o755)),
    'chmod 644': attempt(lambda: os.chmod('f', 0o644)),
    'chmod 1777 dir': attempt(lambda: (os.mkdir('sticky'), os.chmod('sticky', 0o1777))),
    'chmod 4755': attempt(lambda: os.chmod('f', 0o4755)),
    'chmod 2755': attempt(lambda: os.chmod('f', 0o2755)),
    'fchmod 6755': attempt(lambda: os.fchmod(os.open('f', os.O_RDONLY), 0o6755)),
    'open O_CREAT 644': attempt(lambda: os.close(os.open('g', os.O_CREAT | os.O_WRONLY, 0o644))),
    'open O_CREAT 4755': attempt(lambda: os.close(os.open('h', os.O_CREAT | os.O_WRONLY, 0o4755))),
    'open O_TMPFILE 2755': attempt(lambda: os.close(os.open('.', os.O_TMPFILE | os.O_WRONLY, 0o2755))),
    'mknod 644': attempt(lambda: os.mknod('n1', stat.S_IFREG | 0o644)),
    'mknod 4755': attempt(lambda: os.mknod('n2', stat.S_IFREG | 0o4755)),
    'mkdir 6777': attempt(lambda: os.mkdir('d', 0o6777)),
    'makedirs': attempt(lambda: os.makedirs('a/b/c', exist_ok=True)),
    'file capability': attempt(lambda: os.setxattr('f', 'security.capability',
        bytes.fromhex('01000002') + (1 << 7).to_bytes(4, 'little') + bytes(12))),
}
out['exists h'] = os.path.exists('h')
out['exists n2'] = os.path.exists('n2')
out
`

test('a block sets ordinary modes but no set-id bits; files and directories are still made', async () => {
  const root = newRoot()
  const s = await engine.createSession({ roots: [root] })
  const r = await engine.runBlock(s.id, { code: PROBE })
  assert.equal(r.block.error, null, JSON.stringify(r.block.error))
  const out = r.block.result as Record<string, string | boolean>
  // Allowed: everyday modes, the sticky bit, creation, directories.
  for (const k of [
    'chmod 755',
    'chmod 644',
    'chmod 1777 dir',
    'open O_CREAT 644',
    'mknod 644',
    'mkdir 6777',
    'makedirs',
  ])
    assert.equal(out[k], 'ok', `${k}: ${out[k]}`)
  // Python's chmod gets the audit hook's readable refusal first, naming the rule.
  for (const [k, m, ev] of [
    ['chmod 4755', '0o4755', 'os.chmod'],
    ['chmod 2755', '0o2755', 'os.chmod'],
    ['fchmod 6755', '0o6755', 'os.chmod'],
  ] as const)
    assert.equal(
      out[k],
      `hook: vis: setting the set-user-ID or set-group-ID bit (mode ${m}) is not allowed: a file in a root would keep it outside the sandbox; use a mode without 0o6000 [${ev}]`,
      k,
    )
  // The kernel boundary: creation modes raise no audit event (os.mknod none at all), seccomp
  // refuses them with EPERM.
  for (const k of ['open O_CREAT 4755', 'open O_TMPFILE 2755', 'mknod 4755'])
    assert.equal(out[k], 'EPERM', `${k}: ${out[k]}`)
  // File capabilities need CAP_SETFCAP, which the jail never has.
  assert.equal(out['file capability'], 'EPERM')
  assert.equal(out['exists h'], false, 'a refused creation leaves no file')
  assert.equal(out['exists n2'], false)
  // What landed on the host: no set-id bit anywhere; mkdir's were dropped by the kernel.
  assert.equal(mode(join(root, 'f')), 0o644)
  assert.equal(mode(join(root, 'sticky')), 0o1777)
  assert.equal(mode(join(root, 'd')) & 0o6000, 0)
  assert.equal(mode(join(root, 'g')), 0o644)
})

test("the shell's tool jail refuses chmod u+s/g+s with the kernel's message; chmod 755 works", async () => {
  const root = newRoot()
  const s = await engine.createSession({ roots: [root], shell: true })
  const r = await engine.runBlock(s.id, {
    code: [
      "ok = await shell('cp /bin/sh sh && chmod 755 sh && mkdir dir && chmod 775 dir && echo fine')",
      "suid = await shell('chmod 4755 sh')",
      "sgid = await shell('chmod g+s dir')",
      "{'ok': ok['stdout'], 'suid': [suid['exit'], suid['stderr']], 'sgid': [sgid['exit'], sgid['stderr']]}",
    ].join('\n'),
    timeout_ms: 60_000,
  })
  assert.equal(r.block.error, null, JSON.stringify(r.block.error))
  const out = r.block.result as { ok: string; suid: [number, string]; sgid: [number, string] }
  assert.equal(out.ok.trim(), 'fine')
  assert.notEqual(out.suid[0], 0)
  assert.match(out.suid[1], /Operation not permitted/)
  assert.notEqual(out.sgid[0], 0)
  assert.match(out.sgid[1], /Operation not permitted/)
  assert.equal(mode(join(root, 'sh')), 0o755)
  assert.equal(mode(join(root, 'dir')), 0o775)
})
