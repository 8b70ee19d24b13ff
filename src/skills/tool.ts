import type { Json, Tool } from '../tools/types.js'
import { VisError } from '../util/errors.js'
import type { Skill } from './discover.js'

// `skill(name)`: the verb a block calls to load a skill the system prompt listed. What it
// returns names every file as the session sees it (in a root, or under the read-only mount).
export function skillTool(skills: readonly Skill[]): Tool {
  return {
    name: 'skill',
    signature: '(name, /)',
    doc: [
      'Loads a skill listed in the prompt: {"name", "description", "dir", "path", "content", "resources"}.',
      '`content` is the whole SKILL.md; `resources` are the paths of the files beside it, readable',
      'with `cat(...)` or `open(...)` (read-only when `dir` is under /vis/skills).',
    ].join('\n'),
    async run(args): Promise<Json> {
      const name = args[0]
      if (typeof name !== 'string' || name === '') {
        throw new VisError(
          'tool.bad-args',
          'skill(name): name must be a non-empty string, e.g. skill("pdf")',
          {
            op: 'skill',
          },
        )
      }
      const s = skills.find((k) => k.name === name)
      if (!s) {
        const known = skills.map((k) => k.name).join(', ')
        throw new VisError(
          'skill.not-found',
          `no skill named '${name}'; this session's skills are: ${known || '(none)'}`,
          { op: 'skill', name },
        )
      }
      return {
        name: s.name,
        description: s.description,
        dir: s.sessionDir,
        path: `${s.sessionDir}/SKILL.md`,
        content: s.text,
        resources: s.resources.map((r) => `${s.sessionDir}/${r}`),
      }
    },
  }
}
