// `vis doctor` on skills and agent definitions: what was found, what shadows what, what could
// not be read and why, and what a Claude Code definition names that has no counterpart here.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { skillChecks } from '../../src/agent/doctor.js'
import { runCli } from '../distribution/helpers.js'

function layout() {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'vis-skills-doctor-')))
  const project = join(base, 'proj')
  const home = join(base, 'vis-home')
  const userHome = join(base, 'user')
  const write = (path: string, text: string) => {
    mkdirSync(join(path, '..'), { recursive: true })
    writeFileSync(path, text)
  }
  write(
    join(project, '.claude', 'skills', 'deploy', 'SKILL.md'),
    '---\nname: deploy\ndescription: Ship it\n---\n',
  )
  write(
    join(userHome, '.claude', 'skills', 'deploy', 'SKILL.md'),
    '---\nname: deploy\ndescription: Old\n---\n',
  )
  write(join(userHome, '.claude', 'skills', 'broken', 'SKILL.md'), '---\nname: broken\ndescription: x\n')
  write(
    join(project, '.claude', 'agents', 'reviewer.md'),
    '---\nname: reviewer\ndescription: Reviews\nmodel: opus\ntools: Read, WebFetch, Grep\n---\nReview.\n',
  )
  write(
    join(home, 'agents', 'writer.md'),
    '---\nname: writer\ndescription: Writes\nmodel: sonnet\n---\nWrite.\n',
  )
  write(join(home, 'agent.json'), JSON.stringify({ aliases: { sonnet: 'anthropic/claude-sonnet-4-5' } }))
  return { base, project, home, userHome }
}

test('skillChecks: found, shadowed, unreadable with the reason, unmapped tools and models', async () => {
  const { project, home, userHome } = layout()
  const checks = await skillChecks({ project, home, userHome })
  assert.deepEqual(checks, [
    { id: 'skills', level: 'info', message: `1 found: deploy (${project}/.claude/skills/deploy/SKILL.md)` },
    {
      id: 'agents',
      level: 'info',
      message: `2 found: reviewer (${project}/.claude/agents/reviewer.md), writer (${home}/agents/writer.md)`,
    },
    {
      id: 'skills',
      level: 'info',
      message: `deploy at ${userHome}/.claude/skills/deploy/SKILL.md is shadowed by ${project}/.claude/skills/deploy/SKILL.md (the first name wins)`,
    },
    {
      id: 'skills',
      level: 'warn',
      message: `${userHome}/.claude/skills/broken could not be read: the frontmatter is not closed: no second \`---\` line`,
    },
    {
      id: 'agents',
      level: 'info',
      message: `reviewer: tools WebFetch have no counterpart here and are ignored (${project}/.claude/agents/reviewer.md)`,
    },
    {
      id: 'agents',
      level: 'warn',
      message: `reviewer: model "opus" is not in agent.json's "aliases" (add "opus": "<provider>/<model>"); the parent's model is used (${project}/.claude/agents/reviewer.md)`,
    },
  ])
})

test('vis doctor --json lists them beside the other checks', async () => {
  const { base, project, home, userHome } = layout()
  const r = await runCli(['doctor', '--json', '--project', project], {
    ...process.env,
    VIS_HOME: home,
    HOME: userHome,
    VIS_MODEL: '',
  })
  const checks = JSON.parse(r.stdout).checks as { id: string; level: string; message: string }[]
  const ours = checks.filter((c) => c.id === 'skills' || c.id === 'agents')
  assert.equal(ours.length, 6, JSON.stringify(ours))
  assert.ok(ours.some((c) => c.level === 'warn' && c.message.includes('broken could not be read')))
  assert.ok(ours.every((c) => c.message.includes(base) || c.message === 'none found'))
})
