// Skills and agent definitions: the frontmatter parser, the discovery places and their
// precedence, and the Claude Code mappings as pure functions; then discovery on real folders.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { mapClaudeModel, mapClaudeTools } from '../../src/skills/claude-map.js'
import { discover, SKILLS_MOUNT } from '../../src/skills/discover.js'
import { field, listField, parseFrontmatter } from '../../src/skills/frontmatter.js'
import { agentPlaces, firstNameWins, skillPlaces } from '../../src/skills/places.js'

test('frontmatter: plain, quoted, block and list values, and the body after it', () => {
  const text = [
    '---',
    'name: pdf-tools',
    'description: Fill and merge PDF forms',
    '  with the bundled scripts.',
    "model: 'sonnet'",
    'title: "a \\"quoted\\" word"',
    '# a comment',
    'tools: Read, Grep, Bash(git:*)',
    'list: [a, "b c"]',
    'dash:',
    '  - one',
    '  - two',
    'block: |',
    '  line 1',
    '    line 2',
    'folded: >',
    '  one',
    '  two',
    '---',
    '',
    '# Body',
    'text',
  ].join('\r\n')
  const r = parseFrontmatter(`\uFEFF${text}`)
  assert.ok(r.ok, JSON.stringify(r))
  assert.deepEqual(r.data, {
    name: 'pdf-tools',
    description: 'Fill and merge PDF forms with the bundled scripts.',
    model: 'sonnet',
    title: 'a "quoted" word',
    tools: 'Read, Grep, Bash(git:*)',
    list: ['a', 'b c'],
    dash: ['one', 'two'],
    block: 'line 1\n  line 2',
    folded: 'one two',
  })
  assert.equal(r.body, '# Body\ntext')
  assert.deepEqual(listField(r.data, 'tools'), ['Read', 'Grep', 'Bash(git:*)'])
  assert.deepEqual(listField(r.data, 'dash'), ['one', 'two'])
  assert.equal(field(r.data, 'list'), 'a, b c')
  assert.equal(field(r.data, 'missing'), undefined)
})

test('frontmatter: what it cannot read is a failure with the reason and the line', () => {
  const bad = (t: string) => {
    const r = parseFrontmatter(t)
    assert.equal(r.ok, false, t)
    return (r as { reason: string }).reason
  }
  assert.match(bad('# Just markdown\n'), /no frontmatter/)
  assert.match(bad('---\nname: x\n'), /not closed/)
  assert.match(bad('---\nname: x\nthis is prose\n---\n'), /line 3: expected `key: value`/)
  assert.match(bad('---\nname: x\nname: y\n---\n'), /line 3: `name` is given twice/)
  assert.match(bad('---\nd: "open\n---\n'), /line 2: unterminated "double-quoted"/)
  assert.match(bad('---\nl: [a, b\n---\n'), /line 2: a \[list\] must close/)
  assert.match(bad('---\n  name: x\n---\n'), /line 2: unexpected indentation/)
  assert.match(bad('---\nk:\n  not an item\n---\n'), /line 2: `k` holds indented text/)
  // An empty frontmatter is read (and the caller then says what is missing).
  assert.deepEqual(parseFrontmatter('---\n---\nbody'), { ok: true, data: {}, body: 'body' })
})

test('places: each root in order (.vis, .claude, .agents), then the vis home, then ~/.claude', () => {
  const input = { roots: ['/w/a', '/w/b'], visHome: '/h/.vis', userHome: '/h' }
  assert.deepEqual(
    skillPlaces(input).map((p) => [p.dir, p.root ?? null]),
    [
      ['/w/a/.vis/skills', '/w/a'],
      ['/w/a/.claude/skills', '/w/a'],
      ['/w/a/.agents/skills', '/w/a'],
      ['/w/b/.vis/skills', '/w/b'],
      ['/w/b/.claude/skills', '/w/b'],
      ['/w/b/.agents/skills', '/w/b'],
      ['/h/.vis/skills', null],
      ['/h/.claude/skills', null],
    ],
  )
  assert.deepEqual(
    agentPlaces(input).map((p) => p.dir),
    [
      '/w/a/.vis/agents',
      '/w/a/.claude/agents',
      '/w/b/.vis/agents',
      '/w/b/.claude/agents',
      '/h/.vis/agents',
      '/h/.claude/agents',
    ],
  )
})

test('precedence: the first name wins and every later one is reported as shadowed by it', () => {
  const r = firstNameWins([
    { name: 'a', path: '/1/a' },
    { name: 'b', path: '/1/b' },
    { name: 'a', path: '/2/a' },
    { name: 'a', path: '/3/a' },
  ])
  assert.deepEqual(
    r.kept.map((k) => k.path),
    ['/1/a', '/1/b'],
  )
  assert.deepEqual(r.shadowed, [
    { name: 'a', path: '/2/a', by: '/1/a' },
    { name: 'a', path: '/3/a', by: '/1/a' },
  ])
})

test("Claude Code's tool names map to ours; unknown ones are ignored and named", () => {
  assert.equal(mapClaudeTools(undefined), undefined)
  assert.deepEqual(
    mapClaudeTools(['Read', 'Edit', 'Write', 'Bash(git:*)', 'Grep', 'Glob', 'WebFetch', 'cat', 'Task']),
    {
      tools: ['cat', 'patch', 'write', 'shell', 'grep', 'ls'],
      ignored: ['WebFetch', 'Task'],
    },
  )
  assert.deepEqual(mapClaudeTools(['Edit', 'MultiEdit', 'LS', 'Glob']), {
    tools: ['patch', 'ls'],
    ignored: [],
  })
})

test("Claude Code's models: inherit, an alias from agent.json, a full reference, else the parent's with a note", () => {
  const aliases = { sonnet: 'anthropic/claude-sonnet-4-5', haiku: 'openai/gpt-4.1-mini' }
  assert.deepEqual(mapClaudeModel(undefined, 'openai/p', aliases), { model: 'openai/p' })
  assert.deepEqual(mapClaudeModel('inherit', 'openai/p', aliases), { model: 'openai/p' })
  assert.deepEqual(mapClaudeModel('sonnet', 'openai/p', aliases), { model: 'anthropic/claude-sonnet-4-5' })
  assert.deepEqual(mapClaudeModel('anthropic/claude-opus-4', 'openai/p', aliases), {
    model: 'anthropic/claude-opus-4',
  })
  const opus = mapClaudeModel('opus', 'openai/p', aliases)
  assert.equal(opus.model, 'openai/p')
  assert.match(
    opus.note!,
    /"opus" is not in agent.json's "aliases".*"opus": "<provider>\/<model>"\); the parent's model is used/,
  )
})

function skillDir(dir: string, front: string, files: Record<string, string> = {}): void {
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'SKILL.md'), `---\n${front}\n---\n# Steps\n`)
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(dir, rel, '..'), { recursive: true })
    writeFileSync(join(dir, rel), text)
  }
}

test('discovery on real folders: precedence across places, resources, mounts, problems', async () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'vis-skills-')))
  const root = join(base, 'work')
  const visHome = join(base, 'home', '.vis')
  const userHome = join(base, 'home')
  skillDir(join(root, '.claude', 'skills', 'deploy'), 'name: deploy\ndescription: Ship it (project)', {
    'scripts/run.sh': 'echo hi\n',
  })
  skillDir(join(visHome, 'skills', 'deploy'), 'name: deploy\ndescription: Ship it (home)')
  skillDir(join(userHome, '.claude', 'skills', 'pdf'), 'name: pdf\ndescription: PDF forms', {
    'forms.md': 'x',
    'lib/a/b/c/d/too-deep.txt': 'x',
  })
  // A dotfiles-style symlinked skill folder in the person's own ~/.claude is followed.
  skillDir(join(base, 'dotfiles', 'lint'), 'description: Lint the tree')
  symlinkSync(join(base, 'dotfiles', 'lint'), join(userHome, '.claude', 'skills', 'lint'))
  skillDir(join(userHome, '.claude', 'skills', 'broken'), 'name: broken\nthis line is prose')
  skillDir(join(userHome, '.claude', 'skills', 'nodesc'), 'name: nodesc')
  skillDir(join(userHome, '.claude', 'skills', 'badname'), 'name: ../escape\ndescription: d')
  mkdirSync(join(root, '.claude', 'agents'), { recursive: true })
  writeFileSync(
    join(root, '.claude', 'agents', 'reviewer.md'),
    '---\nname: reviewer\ndescription: Reviews diffs\nmodel: sonnet\ntools: Read, Grep\n---\nYou review.\n',
  )
  mkdirSync(join(userHome, '.claude', 'agents'), { recursive: true })
  writeFileSync(join(userHome, '.claude', 'agents', 'reviewer.md'), '---\ndescription: other\n---\nx')
  writeFileSync(join(userHome, '.claude', 'agents', 'notes.txt'), 'not an agent')
  writeFileSync(join(userHome, '.claude', 'agents', 'plain.md'), 'no frontmatter here')

  const f = await discover({ roots: [root], visHome, userHome })
  assert.deepEqual(
    f.skills.map((s) => [s.name, s.description, s.sessionDir, s.mountSource ?? null, s.resources]),
    [
      ['deploy', 'Ship it (project)', join(root, '.claude', 'skills', 'deploy'), null, ['scripts/run.sh']],
      ['lint', 'Lint the tree', `${SKILLS_MOUNT}/lint`, join(base, 'dotfiles', 'lint'), []],
      ['pdf', 'PDF forms', `${SKILLS_MOUNT}/pdf`, join(userHome, '.claude', 'skills', 'pdf'), ['forms.md']],
    ],
  )
  assert.deepEqual(
    f.agents.map((a) => [a.name, a.description, a.model, a.tools, a.prompt]),
    [['reviewer', 'Reviews diffs', 'sonnet', ['Read', 'Grep'], 'You review.']],
  )
  assert.deepEqual(
    f.shadowed.map((s) => [s.kind, s.name, s.path, s.by]),
    [
      [
        'skill',
        'deploy',
        join(visHome, 'skills', 'deploy', 'SKILL.md'),
        join(root, '.claude', 'skills', 'deploy', 'SKILL.md'),
      ],
      [
        'agent',
        'reviewer',
        join(userHome, '.claude', 'agents', 'reviewer.md'),
        join(root, '.claude', 'agents', 'reviewer.md'),
      ],
    ],
  )
  const problems = Object.fromEntries(f.problems.map((p) => [p.path.slice(base.length), p.reason]))
  assert.deepEqual(Object.keys(problems).sort(), [
    '/home/.claude/agents/plain.md',
    '/home/.claude/skills/badname',
    '/home/.claude/skills/broken',
    '/home/.claude/skills/nodesc',
  ])
  assert.match(problems['/home/.claude/skills/broken']!, /line 3: expected `key: value`/)
  assert.match(problems['/home/.claude/skills/nodesc']!, /no `description`/)
  assert.match(problems['/home/.claude/skills/badname']!, /not a plain name/)
  assert.match(problems['/home/.claude/agents/plain.md']!, /no frontmatter/)
})

// The attack: code in the sandbox plants a skill in its root whose SKILL.md (or whose folder)
// is a symlink to a host file, hoping the host reads that file into the model's context.
test('a skill planted in a root through symlinks is refused, and the host file never read', async () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'vis-skills-attack-')))
  const root = join(base, 'work')
  const secret = join(base, 'secret')
  mkdirSync(secret)
  writeFileSync(join(secret, 'SKILL.md'), '---\nname: stolen\ndescription: HOST-SECRET\n---\nHOST-SECRET\n')
  const skills = join(root, '.claude', 'skills')
  mkdirSync(join(skills, 'filelink'), { recursive: true })
  symlinkSync(join(secret, 'SKILL.md'), join(skills, 'filelink', 'SKILL.md'))
  symlinkSync(secret, join(skills, 'dirlink'))
  // A person's own ~/.claude link that leads into the root is read as the root's: no link
  // below it is followed either.
  const userHome = join(base, 'home')
  mkdirSync(join(userHome, '.claude'), { recursive: true })
  symlinkSync(join(root, '.claude', 'skills'), join(userHome, '.claude', 'skills'))
  mkdirSync(join(root, '.claude', 'agents'), { recursive: true })
  symlinkSync(join(secret, 'SKILL.md'), join(root, '.claude', 'agents', 'leak.md'))

  const f = await discover({ roots: [root], visHome: join(base, 'vis'), userHome })
  assert.deepEqual(f.skills, [])
  assert.deepEqual(f.agents, [])
  assert.ok(!JSON.stringify(f).includes('HOST-SECRET'))
  const reasons = f.problems.map((p) => `${p.path.slice(base.length)}: ${p.reason}`)
  assert.ok(
    reasons.includes(
      '/work/.claude/skills/filelink: SKILL.md: missing, or not a regular file (links are not followed under a session root)',
    ),
    reasons.join('\n'),
  )
  assert.ok(
    reasons.includes('/work/.claude/skills/dirlink: a symlink under a session root: not followed'),
    reasons.join('\n'),
  )
  assert.ok(
    reasons.some((r) => r.startsWith('/work/.claude/agents/leak.md: missing, or not a regular file')),
    reasons.join('\n'),
  )
  assert.ok(
    reasons.some((r) =>
      r.startsWith('/home/.claude/skills/filelink: SKILL.md: missing, or not a regular file'),
    ),
    reasons.join('\n'),
  )
})

test('resolveAgent: body as the system prompt, mapped tools and model, notes; an unknown name is refused', async () => {
  const { resolveAgent } = await import('../../src/skills/agent-definition.js')
  const defs = [
    {
      name: 'reviewer',
      description: 'd',
      model: 'haiku',
      tools: ['Read', 'Bash', 'NotebookEdit'],
      prompt: 'You review.',
      path: '/x/reviewer.md',
    },
    { name: 'plain', description: 'd', prompt: 'Plain.', path: '/x/plain.md' },
  ]
  assert.deepEqual(resolveAgent(defs, 'reviewer', 'openai/parent', { haiku: 'openai/small' }), {
    name: 'reviewer',
    system: 'You review.',
    model: 'openai/small',
    tools: ['cat', 'shell'],
    notes: ['tools NotebookEdit have no counterpart here and are ignored'],
  })
  assert.deepEqual(resolveAgent(defs, 'plain', 'openai/parent', {}), {
    name: 'plain',
    system: 'Plain.',
    model: 'openai/parent',
    notes: [],
  })
  assert.throws(
    () => resolveAgent(defs, 'nope', 'openai/parent', {}, { sessionId: 's1' }),
    (e: { code: string; message: string; context: Record<string, unknown> }) =>
      e.code === 'agent.definition-not-found' &&
      e.message === "no agent definition named 'nope'; this session's agents are: reviewer, plain" &&
      e.context.sessionId === 's1',
  )
})

test('the jail binds each skill mount read-only at its target, and Landlock reads it there', async () => {
  const { bubblewrapArgs, launcherArgs } = await import('../../src/confinement/sandbox-args.js')
  const { ConfinementPolicySchema } = await import('../../src/contracts/jail-policy.js')
  const policy = ConfinementPolicySchema.parse({
    roots: ['/w'],
    mounts: [{ source: '/home/u/.claude/skills/pdf', target: '/vis/skills/pdf' }],
  })
  const input = { policy, command: '/usr/bin/node', launcher: '/opt/vis-launcher', landlockAbi: 4 }
  const bw = bubblewrapArgs(input)
  const i = bw.indexOf('/home/u/.claude/skills/pdf')
  assert.deepEqual(bw.slice(i - 1, i + 2), ['--ro-bind', '/home/u/.claude/skills/pdf', '/vis/skills/pdf'])
  assert.ok(!bw.includes('--bind') || bw[bw.indexOf('/vis/skills/pdf') - 2] === '--ro-bind')
  const inside = launcherArgs(input, { inNamespace: true })
  assert.equal(inside[inside.indexOf('/vis/skills/pdf') - 1], '--ro')
  assert.ok(!inside.includes('/home/u/.claude/skills/pdf'))
  // Without a mount namespace the target does not exist: nothing is asked of Landlock there.
  assert.ok(!launcherArgs(input, { inNamespace: false }).includes('/vis/skills/pdf'))
})

test("frontmatter keys named like Object.prototype's are ordinary keys, never a prototype", () => {
  const r = parseFrontmatter('---\nname: x\nconstructor: c\ntoString: t\n__proto__: [a, b]\n---\nbody\n')
  assert.ok(r.ok, r.ok ? '' : r.reason)
  assert.equal(field(r.data, 'constructor'), 'c')
  assert.equal(field(r.data, 'toString'), 't')
  assert.deepEqual(listField(r.data, '__proto__'), ['a', 'b'])
  assert.equal(Object.getPrototypeOf(r.data), Object.prototype, 'the prototype is untouched')
  assert.equal(field(r.data, 'hasOwnProperty'), undefined, 'an absent key reads as absent')
  const twice = parseFrontmatter('---\ntoString: a\ntoString: b\n---\n')
  assert.ok(!twice.ok && /`toString` is given twice/.test(twice.reason))
})
