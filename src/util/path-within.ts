import { sep } from 'node:path'

// Whether `path` is `dir` or lies beneath it, by whole components: /a/bc is not within /a/b. Both
// are compared as given, so callers pass resolved (or real) paths; a `dir` ending in the separator
// ('/', the one resolved path that does) takes its children without doubling it.
export function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep)
}
