// Skills in a real agent turn: discovered from a root and from ~/.claude, listed in the system
// prompt, loaded with `skill(name)` from a block, and a skill outside the roots readable (and
// only readable) by the jailed Python at its fixed mount path.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { pyCall } from '../agent/double.js'
import { harness } from '../agent/harness.js'

function skill(dir: string, front: string, body: string, files: Record<string, string> = {}): void {
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'SKILL.md'), `---\n${front}\n---\n${body}`)
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(dir, rel, '..'), { recursive: true })
    writeFileSync(join(dir, rel), text)
  }
}

const BLOCK = `r = await skill("pdf")
print("dir:", r["dir"])
print("resources:", r["resources"])
print(r["content"])
print(open(r["resources"][0]).read())
try:
    open(r["dir"] + "/planted.txt", "w")
    print("write: allowed")
except OSError as e:
    print("write: refused", type(e).__name__)
c = await cat(r["resources"][0])
print("cat:", c["path"], c["content"])
try:
    await cat("/vis/skills/pdf/../../../etc/passwd")
except Exception as e:
    print("escape:", e)
try:
    await write("/vis/skills/pdf/planted.txt", "x")
except Exception as e:
    print("write tool:", e)
d = await skill("deploy")
print("deploy at:", d["dir"])
try:
    await skill("nope")
except Exception as e:
    print("missing:", e)`

// The system prompt as each wire carries it.
function systemOf(body: any): string {
  if (typeof body.instructions === 'string') return body.instructions
  if (Array.isArray(body.system)) return body.system.map((p: { text: string }) => p.text).join('')
  return body.messages[0].content
}

for (const model of ['openai/double-model', 'anthropic/double-model', 'openai-responses/double-model']) {
  test(`${model}: a turn lists the skills, loads one with skill(name) and reads its files read-only`, async () => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), 'vis-skills-turn-')))
    const userHome = join(base, 'home')
    const root = join(base, 'work')
    skill(
      join(userHome, '.claude', 'skills', 'pdf'),
      'name: pdf\ndescription: Fill PDF forms\n  with the bundled guide.',
      'STEP-ONE: read forms/guide.md\n',
      { 'forms/guide.md': 'GUIDE-TEXT\n' },
    )
    skill(
      join(root, '.vis', 'skills', 'deploy'),
      'name: deploy\ndescription: Ship the service',
      'Run make.\n',
    )
    skill(join(root, '.claude', 'skills', 'broken'), 'name: broken', 'No description.\n')
    const savedHome = process.env.HOME
    process.env.HOME = userHome
    const h = await harness({ root, config: { model } })
    try {
      h.double.script([{ calls: [pyCall(BLOCK)] }, { text: 'Loaded.' }])
      const r = await h.agent.session(h.sessionId).turn('fill the form')
      assert.equal(r.status, 'done', JSON.stringify(r.error))
      // A skill that could not be read is a warning of the turn, with its reason.
      assert.deepEqual(
        h.events.filter((e) => e.type === 'turn.warning').map((e) => [e.kind, e.path, e.reason]),
        [
          [
            'skills',
            join(root, '.claude', 'skills', 'broken'),
            'no `description` in the frontmatter: the prompt lists skills by it',
          ],
        ],
      )
      const system = systemOf(h.double.requests[0]!.body)
      assert.match(
        system,
        /# Skills\n.*`await skill\(name\)`.*\n\n- deploy — Ship the service\n- pdf — Fill PDF forms with the bundled guide\./,
      )
      assert.match(system, /## skill\(name, \/\)/)
      const out = h.engine.getBlock(r.iterations[0]!.block_ids[0]!).stdout
      assert.match(out, /dir: \/vis\/skills\/pdf\n/)
      assert.match(out, /resources: \['\/vis\/skills\/pdf\/forms\/guide\.md'\]/)
      assert.match(out, /STEP-ONE: read forms\/guide\.md/)
      assert.match(out, /GUIDE-TEXT/)
      assert.match(out, /write: refused (PermissionError|OSError)/)
      assert.match(out, /cat: \/vis\/skills\/pdf\/forms\/guide\.md 1:[0-9a-f]+\|GUIDE-TEXT/)
      assert.match(out, /escape: .*\/etc\/passwd/)
      assert.match(out, /write tool: /)
      assert.match(out, new RegExp(`deploy at: ${join(root, '.vis', 'skills', 'deploy')}\\n`))
      assert.match(out, /missing: .*no skill named 'nope'; this session's skills are: deploy, pdf/)
      // The host folder behind the mount is never named to the model.
      const sent = JSON.stringify(h.double.requests.map((q) => q.body))
      assert.ok(!sent.includes(userHome))
    } finally {
      await h.close()
      process.env.HOME = savedHome
    }
  })
}

test('with the shell on, its commands read the skill mount too, and cannot write it', async () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'vis-skills-shell-')))
  const userHome = join(base, 'home')
  skill(join(userHome, '.claude', 'skills', 'pdf'), 'name: pdf\ndescription: PDF', 'x\n', {
    'forms/guide.md': 'GUIDE-TEXT\n',
  })
  const savedHome = process.env.HOME
  process.env.HOME = userHome
  const h = await harness({ shell: true })
  try {
    const code = [
      'r = await shell("cat /vis/skills/pdf/forms/guide.md; touch /vis/skills/pdf/planted || echo WRITE-REFUSED")',
      'print(r)',
    ].join('\n')
    h.double.script([{ calls: [pyCall(code)] }, { text: 'ok' }])
    const t = await h.agent.session(h.sessionId).turn('read it from the shell')
    assert.equal(t.status, 'done', JSON.stringify(t.error))
    const out = h.engine.getBlock(t.iterations[0]!.block_ids[0]!).stdout
    assert.match(out, /GUIDE-TEXT/)
    assert.match(out, /WRITE-REFUSED/)
  } finally {
    await h.close()
    process.env.HOME = savedHome
  }
})
