// ATTACK (surface 3, skills): a skill folder outside a session's roots is bound read-only at
// /vis/skills/<name> BY PATH (`--ro-bind <mountSource> ...`) at every jail the session builds
// (a replacement worker, each shell() tool jail), long after discovery checked it, and nothing
// pins it or checks what it names then. The person's skill folders may lie in another session's
// root (a session working on the person's skills: root ~/.claude/skills). That sandbox renames a
// discovered skill folder away and puts a symlink to any host directory in its place; the next
// shell() of the session that discovered it binds THAT directory at /vis/skills/<name>. Here the
// target is the vis home (its agent.json with the provider keys, the database of every session),
// which no root may contain unmasked; any other host directory works the same.
// The host's `cat` of /vis/skills/<name>/... (a PathGuard rooted at the folder's path) follows the
// swap the same way, without a new jail. On the current code session A reads the vis home's
// agent.json both ways, and through the mount reaches the engine's owner socket (run/*.sock,
// unauthenticated) and closes another session with one JSON line.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'

const python = process.env.VIS_PYTHON_VERSION
const SECRET = 'sk-HOST-ONLY-KEY-5k111m0unt'

test("a skill folder swapped for a symlink after discovery does not mount the link's target", async () => {
  const { e, a, visHome } = await swappedSkill()
  try {
    // A's next tool jail binds whatever the path names now.
    const r = await e.runBlock(a.id, {
      code: "try:\n    r = await shell('cat /vis/skills/notes/agent.json; ls /vis/skills/notes')\n    print(r['stdout'], r['stderr'])\nexcept Exception as ex:\n    print('refused', getattr(ex, 'code', None), ex)",
    })
    assert.ok(
      !(r.block.stdout ?? '').includes(SECRET),
      `session A read the vis home through the swapped skill mount:\n${r.block.stdout}`,
    )
    // Refused for the right reason: the jail will not bind a folder that is not the one found.
    assert.match(
      r.block.stdout ?? '',
      /^refused skill\.folder-changed .*Skill notes/m,
      JSON.stringify(r.block),
    )
    assert.ok(!(r.block.stdout ?? '').includes(visHome), 'the refusal names no host path')
  } finally {
    await e.close()
  }
})

test("the host's cat through a skill folder swapped for a symlink does not read the link's target", async () => {
  const { e, a, visHome } = await swappedSkill()
  try {
    // The host's cat reads skill paths through a guard rooted at the folder's path, as it is now.
    const r = await e.runBlock(a.id, {
      code: "try:\n    print(await cat('/vis/skills/notes/agent.json'))\nexcept Exception as ex:\n    print('refused', getattr(ex, 'code', None), ex)",
    })
    assert.ok(
      !(r.block.stdout ?? '').includes(SECRET),
      `session A read the vis home through the host's cat of the swapped skill folder:\n${r.block.stdout}`,
    )
    assert.match(
      r.block.stdout ?? '',
      /^refused skill\.folder-changed .*Skill notes/m,
      JSON.stringify(r.block),
    )
    assert.ok(!(r.block.stdout ?? '').includes(visHome), 'the refusal names no host path')
  } finally {
    await e.close()
  }
})

test('a skill folder swapped for a link to the vis home does not let a block reach the owner socket', async () => {
  const { e, a, b } = await swappedSkill()
  try {
    // A's next tool jail binds the vis home; its run/*.sock is the engine's owner socket, and the
    // database names every session. One JSON line per session closes it.
    // (A's own session is among them: its block may end with it.)
    await e
      .runBlock(a.id, {
        code: `script = """
import glob, os, socket
H = '/vis/skills/notes'
print('RUN', os.listdir(H + '/run'), 'OUTBOX', os.listdir(H + '/outbox'))
for s in glob.glob(H + '/run/*.sock'):
    import re
    ids = set()
    for f in glob.glob(H + '/vis.db*'):
        ids |= set(re.findall(rb'ses_[0-9a-f]{32}', open(f, 'rb').read()))
    print('IDS', len(ids))
    # Every line is sent before any answer is read: this session is among them.
    socks = []
    for sid in sorted(i.decode() for i in ids):
        c = socket.socket(socket.AF_UNIX)
        c.connect(s)
        c.sendall(('{"op": "close", "sessionId": "%s"}' % sid + chr(10)).encode())
        socks.append(c)
    for c in socks:
        print('SOCK', c.recv(200))
"""
open('probe.py', 'w').write(script)
r = await shell('python3 probe.py')
print(r['stdout'], r['stderr'])`,
      })
      .catch(() => undefined)
    // The owner socket answers anyone who can connect (the home's 0700 mode was its guard):
    // session B, which A's sandbox never had any handle on, is closed.
    assert.equal(e.sessionView(b.id).state, 'open', 'a block closed another session through the owner socket')
  } finally {
    await e.close()
  }
})

// Session A found the person's skill `notes` and mounted it; session B, whose root is the
// person's skills folder, then swapped that folder for a link to the vis home.
async function swappedSkill() {
  const userHome = mkdtempSync(join(tmpdir(), 'vis-attack-userhome-'))
  process.env.HOME = userHome // homedir(): where ~/.claude/skills is looked for
  const visHome = mkdtempSync(join(tmpdir(), 'vis-attack-vishome-'))
  process.env.VIS_HOME = visHome
  writeFileSync(join(visHome, 'agent.json'), JSON.stringify({ providers: { openai: { apiKey: SECRET } } }))
  const skills = join(userHome, '.claude', 'skills')
  mkdirSync(join(skills, 'notes'), { recursive: true })
  writeFileSync(
    join(skills, 'notes', 'SKILL.md'),
    '---\nname: notes\ndescription: take notes\n---\nWrite notes.\n',
  )
  const work = mkdtempSync(join(tmpdir(), 'vis-attack-work-'))
  const e = await createEngine({ home: visHome, python, pool: { size: 0 }, extensions: false })
  try {
    // A: an ordinary session; its worker start finds the person's skill and mounts it.
    const a = await e.createSession({ roots: [work], shell: true })
    const seen = await e.runBlock(a.id, {
      code: "print((await shell('ls /vis/skills/notes'))['stdout'])",
    })
    assert.match(seen.block.stdout ?? '', /SKILL\.md/, JSON.stringify(seen.block))
    // B: a session editing the person's skills (its root is that folder) swaps the skill folder.
    const b = await e.createSession({ roots: [skills], shell: true })
    const swap = await e.runBlock(b.id, {
      code: `r = await shell(${JSON.stringify(`mv notes notes.orig && ln -s ${visHome} notes && echo swapped`)})
print(r['stdout'], r['stderr'])`,
    })
    assert.match(swap.block.stdout ?? '', /swapped/, JSON.stringify(swap.block))
    return { e, a, b, visHome }
  } catch (err) {
    await e.close()
    throw err
  }
}
