import { closeSync, readlinkSync } from 'node:fs'
import { posix, relative } from 'node:path'
import { atFd } from '../confinement/beneath.js'
import { openPinnedFolder } from '../confinement/mount-pins.js'
import { splitArgs } from '../tools/args.js'
import { catTool } from '../tools/fs/cat.js'
import { isWithin, PathGuard } from '../tools/fs/paths.js'
import type { Json, Tool } from '../tools/types.js'
import type { Skill } from './discover.js'

// `cat` also reads the skill folders mounted at /vis/skills (outside the roots), as the jailed
// Python does. Each call opens the folder once, checks it is still the folder found (its pin) and
// holds no vis home (confinement/mount-pins.ts), and reads beneath that fd only (openat2
// RESOLVE_IN_ROOT: a link inside the folder cannot lead out, a folder swapped for a link is
// refused, skill.folder-changed). The path is named to the reader relative to the folder (its
// errors never show the host path), and the answer names the file where the session sees it.
// Only `cat`: the other file tools keep refusing these paths, which are read-only.
export function catThroughSkills(cat: Tool, skills: readonly Skill[], sessionId: string): Tool {
  const mounted = skills.filter((s) => s.mountSource !== undefined)
  if (mounted.length === 0) return cat
  const readIn = async (s: Skill, args: unknown[], ctx: Parameters<Tool['run']>[1]) => {
    const fd = openPinnedFolder(
      { source: s.mountSource!, pin: s.mountPin, name: s.name },
      { sessionId, op: 'cat' },
    )
    try {
      const real = readlinkSync(atFd(fd))
      const guard = new PathGuard([real], sessionId, [], (abs) =>
        isWithin(abs, real) ? { root: atFd(fd), path: relative(real, abs) || '.' } : undefined,
      )
      return (await catTool(guard).run(args, ctx)) as { [key: string]: Json }
    } finally {
      closeSync(fd)
    }
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
      const out = await readIn(s, inner, ctx)
      const shown = out.path === '.' ? s.sessionDir : `${s.sessionDir}/${out.path}`
      return { ...out, path: shown }
    },
  }
}
