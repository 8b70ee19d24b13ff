// ATTACK (issue 32, modes): a session created with mode 'read-only' must change nothing in its
// roots, whatever the block or the model's tools try: writing, creating, renaming, unlinking,
// hard links, a temp file renamed over a file, os.open(O_CREAT), mkdir and symlink from Python;
// write/patch/move/delete/create_dirs, git commit/checkout and a shell's touch/mv from the host
// tools. Each is refused for the right reason: the audit hook's PermissionError naming the
// read-only session, the host tools' tool.session-read-only, and underneath the jail's
// read-only mounts (EROFS) with the audit hook switched off (the kernel-only proof), the same
// for the shell and git run in their tool jail. Both directions: the roots still read, /tmp in
// the jail still writes, and a workspace session given the same attacks changes the files
// (so every assertion here can fail).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import { python, tempHome } from '../sessions/helpers.js'

let rt: Runtime
let kernelOnly: Runtime
const made: string[] = []

before(async () => {
  const { home } = tempHome('attack-read-only')
  rt = await createRuntime({ home, python, pool: { size: 0 } })
  kernelOnly = await createRuntime({ home, python, pool: { size: 0 }, auditPolicy: 'permissive' })
})
after(async () => {
  await rt.close()
  await kernelOnly.close()
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

// A workspace that is a git repository with one commit, so the git tool is bound.
function workspace(): string {
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-ro-'))
  made.push(root)
  writeFileSync(join(root, 'a.txt'), 'original\n')
  writeFileSync(join(root, 'b.txt'), 'second\n')
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, stdio: 'ignore' })
  git('init', '-q')
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'add', '.')
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'init')
  return root
}

// The tree as names and contents (.git's refs and index included): what "nothing changed" means.
function snapshot(dir: string): string {
  const out: string[] = []
  const walk = (d: string, rel: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name)
      const st = statSync(p)
      if (st.isDirectory()) walk(p, `${rel}${name}/`)
      else out.push(`${rel}${name} ${st.size} ${readFileSync(p).toString('base64')}`)
    }
  }
  walk(dir, '')
  return out.join('\n')
}

// Every filesystem attack from Python, each reported as [name, outcome].
const PY_ATTACKS = (root: string) => `import json, os, tempfile, shutil
R = ${JSON.stringify(root)}
out = {}
def attempt(name, fn):
    try:
        fn()
        out[name] = 'done'
    except OSError as e:
        out[name] = f'{type(e).__name__} errno={e.errno} {e}'
def temp_and_rename():
    fd, tmp = tempfile.mkstemp(dir=R)
    os.write(fd, b'x'); os.close(fd)
    os.replace(tmp, R + '/a.txt')
def tmp_outside_then_rename():
    with open('/tmp/vis-ro-swap', 'w') as f:
        f.write('swapped')
    os.replace('/tmp/vis-ro-swap', R + '/a.txt')
attempt('open-write', lambda: open(R + '/a.txt', 'w').write('changed'))
attempt('open-append', lambda: open(R + '/a.txt', 'a').write('more'))
attempt('open-create', lambda: open(R + '/new.txt', 'x').write('new'))
attempt('os-open-creat', lambda: os.close(os.open(R + '/creat.txt', os.O_CREAT | os.O_WRONLY, 0o644)))
attempt('rename', lambda: os.rename(R + '/a.txt', R + '/moved.txt'))
attempt('unlink', lambda: os.unlink(R + '/b.txt'))
attempt('hard-link', lambda: os.link(R + '/a.txt', R + '/linked.txt'))
attempt('symlink', lambda: os.symlink('/etc/passwd', R + '/sym'))
attempt('mkdir', lambda: os.mkdir(R + '/dir'))
attempt('temp-and-rename', temp_and_rename)
attempt('tmp-outside-then-rename', tmp_outside_then_rename)
attempt('copy-into', lambda: shutil.copy('/etc/hostname' if os.path.exists('/etc/hostname') else R + '/b.txt', R + '/copy.txt'))
attempt('git-index', lambda: open(R + '/.git/index', 'r+b').write(b'x'))
# what still works: reading the roots; /tmp as before (the audit hook's, the jail's tmpfs)
out['read'] = open(R + '/a.txt').read()
def scratch():
    with open('/tmp/vis-ro-scratch', 'w') as f:
        f.write('scratch')
    out['tmp-read'] = open('/tmp/vis-ro-scratch').read()
attempt('tmp', scratch)
print(json.dumps(out))`

const WRITES = [
  'open-write',
  'open-append',
  'open-create',
  'os-open-creat',
  'rename',
  'unlink',
  'hard-link',
  'symlink',
  'mkdir',
  'temp-and-rename',
  'copy-into',
  'git-index',
]

async function pyAttacks(runtime: Runtime, mode: 'read-only' | undefined, root: string) {
  const s = await runtime.createSession({ roots: [root], ...(mode ? { mode } : {}) })
  try {
    const r = await s.runBlock(PY_ATTACKS(root))
    assert.equal(r.error ?? null, null, JSON.stringify(r.error))
    return JSON.parse((r.stdout ?? '').trim().split('\n').pop()!) as Record<string, string>
  } finally {
    await s.dispose()
  }
}

test('a read-only session: every write from Python is refused by the audit hook, saying the session is read-only', async () => {
  const root = workspace()
  const before = snapshot(root)
  const out = await pyAttacks(rt, 'read-only', root)
  for (const name of WRITES) {
    assert.match(out[name]!, /^PermissionError .*the session is read-only/, `${name}: ${out[name]}`)
  }
  assert.equal(out.read, 'original\n')
  // /tmp is outside the roots: the hook refuses it as it always has, not as read-only.
  for (const name of ['tmp', 'tmp-outside-then-rename']) {
    assert.match(out[name]!, /^PermissionError .*outside the read-write roots/, `${name}: ${out[name]}`)
  }
  assert.equal(snapshot(root), before, 'the root changed')
})

test('a read-only session without the audit hook: the jail mounts refuse every write (EROFS)', async () => {
  const root = workspace()
  const before = snapshot(root)
  const out = await pyAttacks(kernelOnly, 'read-only', root)
  for (const name of WRITES) {
    assert.match(out[name]!, /errno=30 /, `${name}: ${out[name]}`)
  }
  // A rename from the jail's /tmp crosses mounts (EXDEV) or meets the read-only one (EROFS).
  assert.match(out['tmp-outside-then-rename']!, /errno=(30|18) /, out['tmp-outside-then-rename'])
  assert.equal(out.read, 'original\n')
  assert.equal(out['tmp-read'], 'scratch')
  assert.equal(snapshot(root), before, 'the root changed')
})

test('the same attacks in a workspace session change the root (the control)', async () => {
  const root = workspace()
  const out = await pyAttacks(rt, undefined, root)
  for (const name of ['open-write', 'open-create', 'os-open-creat', 'mkdir', 'symlink', 'unlink', 'rename']) {
    assert.equal(out[name], 'done', `${name}: ${out[name]}`)
  }
  assert.ok(existsSync(join(root, 'new.txt')))
})

// The host tools' attacks, each reported as [name, code or outcome].
const TOOL_ATTACKS = `import json
out = {}
async def attempt(name, coro):
    try:
        r = await coro
        out[name] = r if isinstance(r, dict) and 'exit' in r else 'done'
    except Exception as e:
        out[name] = {'code': getattr(e, 'code', None), 'message': str(e)}
await attempt('write', write('a.txt', 'changed'))
await attempt('write-new', write('sub/new.txt', 'new'))
await attempt('patch', patch([{'path': 'a.txt', 'search': 'original', 'replace': 'patched'}]))
await attempt('move', move('a.txt', 'moved.txt'))
await attempt('delete', delete('b.txt'))
await attempt('create_dirs', create_dirs('made/here'))
await attempt('git-commit', git('commit', '--allow-empty', '-m', 'x'))
await attempt('git-checkout', git('checkout', '-b', 'other'))
await attempt('git-branch-create', git('branch', 'other'))
await attempt('git-stash', git('stash'))
await attempt('git-status', git('status', '--short'))
await attempt('git-log', git('log', '--oneline'))
await attempt('git-branch-list', git('branch'))
await attempt('shell-touch', shell('touch new.txt'))
await attempt('shell-mv', shell('mv a.txt moved.txt'))
await attempt('shell-redirect', shell('echo x >> a.txt'))
await attempt('shell-git-commit', shell('git -c user.name=t -c user.email=t@t commit --allow-empty -qm x'))
await attempt('shell-read', shell('cat a.txt'))
await attempt('shell-tmp', shell('echo scratch > /tmp/s && cat /tmp/s'))
print(json.dumps(out))`

test('a read-only session: write, patch, move, delete, create_dirs and git writes are refused (tool.session-read-only); the shell cannot write (EROFS)', async () => {
  const root = workspace()
  const before = snapshot(root)
  const s = await rt.createSession({ roots: [root], mode: 'read-only', shell: true })
  let out: Record<
    string,
    { code?: string; message?: string; exit?: number; stdout?: string; stderr?: string }
  >
  try {
    const r = await s.runBlock(TOOL_ATTACKS)
    assert.equal(r.error ?? null, null, JSON.stringify(r.error))
    out = JSON.parse((r.stdout ?? '').trim().split('\n').pop()!)
  } finally {
    await s.dispose()
  }
  for (const name of [
    'write',
    'write-new',
    'patch',
    'move',
    'delete',
    'create_dirs',
    'git-commit',
    'git-checkout',
    'git-branch-create',
    'git-stash',
  ]) {
    assert.equal(out[name]?.code, 'tool.session-read-only', `${name}: ${JSON.stringify(out[name])}`)
    assert.match(out[name]!.message!, /read-only/, name)
  }
  for (const name of ['shell-touch', 'shell-mv', 'shell-redirect', 'shell-git-commit']) {
    const r = out[name]!
    assert.notEqual(r.exit, 0, `${name}: ${JSON.stringify(r)}`)
    assert.match(`${r.stdout}${r.stderr}`, /Read-only file system/, `${name}: ${JSON.stringify(r)}`)
  }
  // Reading still works, in the tools as in the shell; /tmp in the jail is still the sandbox's.
  assert.equal(out['git-status']?.exit, 0, JSON.stringify(out['git-status']))
  assert.match(out['git-log']?.stdout ?? '', /init/)
  assert.match(out['git-branch-list']?.stdout ?? '', /master|main/)
  assert.equal(out['shell-read']?.stdout, 'original\n')
  assert.equal(out['shell-tmp']?.stdout, 'scratch\n')
  assert.equal(snapshot(root), before, 'the root changed')
})

test('the host tools still write in a workspace session (the control)', async () => {
  const root = workspace()
  const s = await rt.createSession({ roots: [root], shell: true })
  try {
    const r = await s.runBlock(
      `await write('c.txt', 'made')\nr = await shell('touch d.txt')\nprint(r['exit'])`,
    )
    assert.equal(r.error ?? null, null, JSON.stringify(r.error))
    assert.equal((r.stdout ?? '').trim(), '0')
  } finally {
    await s.dispose()
  }
  assert.equal(readFileSync(join(root, 'c.txt'), 'utf8'), 'made')
  assert.ok(existsSync(join(root, 'd.txt')))
})
