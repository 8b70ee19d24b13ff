import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

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

export function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, text)
}

// An extension file registering `name` with the given Python body (tools defined in it).
export function extension(name: string, body: string, fields = ''): string {
  return `import vis\n\n${body}\n\nvis.register(vis.Extension(name=${JSON.stringify(name)}${fields}))\n`
}
