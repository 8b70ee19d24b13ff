import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { VisError } from '../util/errors.js'
import { readPromptFile } from './read-text.js'

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/

// Where templates live, the project's first: it beats the vis home's of the same name.
const dirsOf = (home: string, project: string | undefined) => [
  ...(project ? [join(project, '.vis', 'prompts')] : []),
  join(home, 'prompts'),
]

export function listTemplates(home: string, project: string | undefined): string[] {
  const names = new Set<string>()
  for (const dir of dirsOf(home, project)) {
    if (!existsSync(dir)) continue
    for (const f of readdirSync(dir))
      if (f.endsWith('.md') && NAME.test(f.slice(0, -3))) names.add(f.slice(0, -3))
  }
  return [...names].sort()
}

// `/<name> args` becomes the template's text with $ARGUMENTS replaced by args. Text that does
// not start with a template-like `/word` is the prompt as is (`/usr/bin is gone` stays text).
// The project's templates lie in a root the sandbox writes: read beneath it with no symlink, a
// regular file only, bounded (read-text.ts); one that is not is refused, never followed.
export async function expandTemplate(
  prompt: string,
  home: string,
  project: string | undefined,
): Promise<{ prompt: string; template?: { name: string; path: string } }> {
  const m = /^\/([^\s/]+)(?:[ \t]+([\s\S]*))?$/.exec(prompt.trim())
  if (!m || !NAME.test(m[1]!)) return { prompt }
  const name = m[1]!
  const args = (m[2] ?? '').trim()
  const places = [
    ...(project ? [{ tree: project, rel: `.vis/prompts/${name}.md`, strict: true }] : []),
    { tree: join(home, 'prompts'), rel: `${name}.md`, strict: false },
  ]
  for (const p of places) {
    const path = join(p.tree, p.rel)
    const f = await readPromptFile(p.tree, p.rel, p.strict)
    if (f.kind === 'absent') continue
    if (f.kind === 'skipped')
      throw new VisError(
        'agent.template-unreadable',
        `Prompt template /${name} at ${path} was not read: ${f.reason}. Replace it with a regular file.`,
        { template: name, path },
      )
    return { prompt: f.text.replaceAll('$ARGUMENTS', args), template: { name, path } }
  }
  const known = listTemplates(home, project)
  throw new VisError(
    'agent.unknown-template',
    `No prompt template /${name} in ${dirsOf(home, project).join(' or ')}; ${
      known.length > 0 ? `known: ${known.map((k) => `/${k}`).join(', ')}` : 'none exist'
    }.`,
    { template: name },
  )
}
