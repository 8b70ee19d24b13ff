import { posix } from 'node:path'
import { splitArgs } from '../tools/args.js'
import { catTool } from '../tools/fs/cat.js'
import { PathGuard } from '../tools/fs/paths.js'
import type { Json, Tool } from '../tools/types.js'
import type { Skill } from './discover.js'

// `cat` also reads the skill folders mounted at /vis/skills (outside the roots), as the jailed
// Python does: a path under a mounted skill is read by a cat whose only root is that folder
// (so a link inside it cannot lead out), named to it relative to the folder (its errors never
// show the host path), and the answer names the file where the session sees it. Only `cat`:
// the other file tools keep refusing these paths, which are read-only.
export function catThroughSkills(cat: Tool, skills: readonly Skill[], sessionId: string): Tool {
  const mounted = skills.filter((s) => s.mountSource !== undefined)
  if (mounted.length === 0) return cat
  const readers = new Map<string, Tool>()
  const readerFor = (s: Skill) => {
    let r = readers.get(s.name)
    if (!r) {
      r = catTool(new PathGuard([s.mountSource!], sessionId))
      readers.set(s.name, r)
    }
    return r
  }
  return {
    ...cat,
    async run(args, ctx) {
      const { positional, kwargs } = splitArgs(args)
      const byName = typeof kwargs.path === 'string'
      const given = byName ? kwargs.path : positional[0]
      // `..` is settled first: a path that climbs out of the mount is the ordinary cat's to refuse.
      const path = typeof given === 'string' && given.startsWith('/') ? posix.normalize(given) : given
      const s =
        typeof path === 'string'
          ? mounted.find((k) => path === k.sessionDir || path.startsWith(`${k.sessionDir}/`))
          : undefined
      if (!s || typeof path !== 'string') return cat.run(args, ctx)
      const rel = path === s.sessionDir ? '.' : path.slice(s.sessionDir.length + 1)
      const inner = byName
        ? [...positional, { ...kwargs, path: rel }]
        : [rel, ...positional.slice(1), ...(Object.keys(kwargs).length > 0 ? [kwargs] : [])]
      const out = (await readerFor(s).run(inner, ctx)) as { [key: string]: Json }
      const shown = out.path === '.' ? s.sessionDir : `${s.sessionDir}/${out.path}`
      return { ...out, path: shown }
    },
  }
}
