// Skill folders outside the roots are pinned when found (confinement/mount-pins.ts): every jail
// binds them from an fd checked against the pin, the host's cat reads beneath that fd, and a
// folder that is or contains a vis home is never shown. Both directions: the folder as found is
// read (by the jail and the host), anything else is refused with its own code.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, renameSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { openMounts } from '../../src/confinement/mount-pins.js'
import { rootIdentity } from '../../src/confinement/root-guard.js'
import { createEngine } from '../../src/engine/index.js'
import { discover } from '../../src/skills/discover.js'
import { isVisError } from '../../src/util/errors.js'
import { registerHome } from '../../src/util/home-registry.js'

const python = process.env.VIS_PYTHON_VERSION
const SKILL = (name: string) => `---\nname: ${name}\ndescription: take notes\n---\nWrite notes.\n`

function skillDir(): { base: string; folder: string } {
  const base = mkdtempSync(join(tmpdir(), 'vis-skill-pin-'))
  const folder = join(base, 'notes')
  mkdirSync(folder)
  writeFileSync(join(folder, 'SKILL.md'), SKILL('notes'))
  return { base, folder }
}

const pinOf = (folder: string) => {
  const opened = openMounts([{ source: folder, target: '/vis/skills/notes' }], {})
  try {
    return rootIdentity(opened.fds.get('/vis/skills/notes')!)
  } finally {
    opened.close()
  }
}

const refusal = (f: () => unknown): { code: string; message: string } => {
  try {
    f()
  } catch (err) {
    if (isVisError(err)) return { code: err.code, message: err.message }
    throw err
  }
  assert.fail('not refused')
}

test('a pinned skill folder opens as found; moved, swapped for a link or holding a vis home it is refused', () => {
  const { base, folder } = skillDir()
  const pin = pinOf(folder)
  const mount = { source: folder, target: '/vis/skills/notes', pin }
  const ok = openMounts([mount], { sessionId: 's1' })
  assert.equal(rootIdentity(ok.fds.get('/vis/skills/notes')!), pin)
  ok.close()

  // Another folder of the same name in its place: not the one found.
  renameSync(folder, join(base, 'notes.orig'))
  mkdirSync(folder)
  let r = refusal(() => openMounts([mount], { sessionId: 's1' }))
  assert.equal(r.code, 'skill.folder-changed')
  assert.match(r.message, /Skill notes's folder is no longer the folder it was/)
  assert.ok(!r.message.includes(base), 'the refusal names no host path')

  // A link to the folder found, or to anything else: never followed.
  renameSync(folder, join(base, 'other'))
  symlinkSync(join(base, 'notes.orig'), folder)
  assert.equal(refusal(() => openMounts([mount], {})).code, 'skill.folder-changed')

  // The folder found, later holding a vis home (another process's VIS_HOME below it).
  const { folder: holder } = skillDir()
  const holderPin = pinOf(holder)
  const home = join(holder, 'home')
  mkdirSync(home)
  registerHome(home)
  r = refusal(() =>
    openMounts([{ source: holder, target: '/vis/skills/notes', pin: holderPin }], { sessionId: 's1' }),
  )
  assert.equal(r.code, 'skill.folder-vis-home')
  assert.match(r.message, /Skill notes's folder is or contains a vis home/)
})

test('discovery leaves out a skill folder that is or contains a vis home, and pins the others', async () => {
  const userHome = mkdtempSync(join(tmpdir(), 'vis-skill-pin-user-'))
  const skills = join(userHome, '.claude', 'skills')
  for (const name of ['notes', 'keeper']) {
    mkdirSync(join(skills, name), { recursive: true })
    writeFileSync(join(skills, name, 'SKILL.md'), SKILL(name))
  }
  const inner = join(skills, 'keeper', 'state')
  mkdirSync(inner)
  registerHome(inner)
  const visHome = mkdtempSync(join(tmpdir(), 'vis-skill-pin-home-'))
  const found = await discover({ roots: [], visHome, userHome })
  assert.deepEqual(
    found.skills.map((s) => s.name),
    ['notes'],
  )
  assert.equal(found.skills[0]!.mountPin, pinOf(join(skills, 'notes')))
  const problem = found.problems.find((p) => p.path === join(skills, 'keeper'))
  assert.match(problem?.reason ?? '', /is or contains a vis home/)
})

test("the jail and the host's cat read a pinned skill folder as found; a link inside it stays inside", async () => {
  const userHome = mkdtempSync(join(tmpdir(), 'vis-skill-pin-user-'))
  const before = process.env.HOME
  process.env.HOME = userHome
  const visHome = mkdtempSync(join(tmpdir(), 'vis-skill-pin-home-'))
  const skills = join(userHome, '.claude', 'skills')
  mkdirSync(join(skills, 'notes'), { recursive: true })
  writeFileSync(join(skills, 'notes', 'SKILL.md'), SKILL('notes'))
  writeFileSync(join(skills, 'notes', 'guide.txt'), 'step one\n')
  const outside = mkdtempSync(join(tmpdir(), 'vis-skill-pin-out-'))
  writeFileSync(join(outside, 'secret.txt'), 'HOST-ONLY\n')
  symlinkSync(join(outside, 'secret.txt'), join(skills, 'notes', 'leak.txt'))
  const work = mkdtempSync(join(tmpdir(), 'vis-skill-pin-work-'))
  const e = await createEngine({ home: visHome, python, pool: { size: 0 }, extensions: false })
  try {
    const s = await e.createSession({ roots: [work], shell: true })
    const r = await e.runBlock(s.id, {
      code: `import json
out = {}
out['shell'] = (await shell('cat /vis/skills/notes/guide.txt'))['stdout']
out['cat'] = (await cat('/vis/skills/notes/guide.txt'))
try:
    out['leak'] = await cat('/vis/skills/notes/leak.txt')
except Exception as ex:
    out['leak'] = {'code': getattr(ex, 'code', None)}
print(json.dumps(out))`,
    })
    const out = JSON.parse((r.block.stdout ?? '').trim().split('\n').at(-1) ?? '{}')
    assert.equal(out.shell, 'step one\n', JSON.stringify(r.block))
    assert.equal(out.cat.path, '/vis/skills/notes/guide.txt')
    assert.match(JSON.stringify(out.cat), /step one/)
    assert.ok(!JSON.stringify(out.leak).includes('HOST-ONLY'), JSON.stringify(out.leak))
    assert.equal(out.leak.code, 'tool.not-found', JSON.stringify(out.leak))
  } finally {
    await e.close()
    process.env.HOME = before
  }
})
