// The source files the language linters look at: every file under the repository with one
// of the given extensions, minus what .gitignore ignores (node_modules, cpython-dist, build
// output, caches). Walking the tree rather than a fixed list of folders means a new folder
// of Python or C++ is linted without anyone remembering to add it.
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const ignore = require('ignore')

export function sourceFiles(extensions) {
  const ig = ignore().add(['.git/', ...readFileSync(join(repoRoot, '.gitignore'), 'utf8').split('\n')])
  const out = []
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const abs = join(dir, entry.name)
      const rel = relative(repoRoot, abs).split(sep).join('/')
      if (entry.isDirectory()) {
        if (!ig.ignores(`${rel}/`)) walk(abs)
      } else if (entry.isFile() && extensions.some((ext) => entry.name.endsWith(ext)) && !ig.ignores(rel)) {
        out.push(rel)
      }
    }
  }
  walk(repoRoot)
  return out.sort()
}
