import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, sep } from 'node:path'
import { trustProject } from '../../src/extensions/trust.js'

export const python = process.env.VIS_PYTHON_VERSION

// A temp vis home and project; VIS_HOME points at the home so nothing touches ~/.vis.
export function tempLayout(prefix: string): {
  base: string
  home: string
  project: string
  global: string
  local: string
} {
  const base = mkdtempSync(join(tmpdir(), `vis-${prefix}-`))
  const home = join(base, 'home')
  const project = join(base, 'project')
  const global = join(home, 'extensions')
  const local = join(project, '.vis', 'extensions')
  mkdirSync(global, { recursive: true })
  mkdirSync(local, { recursive: true })
  process.env.VIS_HOME = home
  return { base, home, project, global, local }
}

// The person's own edit: a file written under a project's .vis/extensions is trusted with the
// rest of that folder right after (as `vis ext trust` does), so the project loads it. Tests of
// what happens to content nobody trusted write with writeFileSync (test/extensions/trust.test.ts).
export function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, text)
  retrust(path)
}

// The person's own removal, trusted the same way.
export function remove(path: string, opts: { force?: boolean; recursive?: boolean } = {}): void {
  rmSync(path, opts)
  retrust(path)
}

function retrust(path: string): void {
  const parts = path.split(sep)
  const at = parts.lastIndexOf('.vis')
  if (at > 0 && parts[at + 1] === 'extensions') trustFolder(parts.slice(0, at).join(sep))
}

// Trusts a project's extension folder as it is now (after a test removed or renamed a file in it).
export function trustFolder(project: string): void {
  trustProject(undefined, project, join(project, '.vis', 'extensions'))
}

// An extension file registering `name` with the given Python body (tools defined in it).
export function extension(name: string, body: string, fields = ''): string {
  return `import vis\n\n${body}\n\nvis.register(vis.Extension(name=${JSON.stringify(name)}${fields}))\n`
}
