import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { VisError } from '../util/errors.js'

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
export function expandTemplate(
  prompt: string,
  home: string,
  project: string | undefined,
): { prompt: string; template?: { name: string; path: string } } {
  const m = /^\/([^\s/]+)(?:[ \t]+([\s\S]*))?$/.exec(prompt.trim())
  if (!m || !NAME.test(m[1]!)) return { prompt }
  const name = m[1]!
  const args = (m[2] ?? '').trim()
  for (const dir of dirsOf(home, project)) {
    const path = join(dir, `${name}.md`)
    if (!existsSync(path)) continue
    const text = readFileSync(path, 'utf8')
    return { prompt: text.replaceAll('$ARGUMENTS', args), template: { name, path } }
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
