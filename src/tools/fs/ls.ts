import { z } from 'zod'
import { VisError } from '../../util/errors.js'
import { bindNames, parseArgs, splitArgs } from '../args.js'
import type { Tool } from '../types.js'
import { ignoreReader } from './gitignore.js'
import type { PathGuard } from './paths.js'
import { openForRead } from './read.js'
import { walkTree } from './walk.js'

const SIGNATURE = "(path='.', /, *, depth=2, is_hidden=False, is_respect_gitignore=True, limit=500)"
export const LS_MAX_ENTRIES = 5000

const Args = z
  .object({
    path: z.string().min(1).default('.'),
    depth: z.number().int().min(1).max(20).default(2),
    is_hidden: z.boolean().default(false),
    is_respect_gitignore: z.boolean().default(true),
    limit: z.number().int().min(1).max(LS_MAX_ENTRIES).default(500),
  })
  .strict()

export function lsTool(guard: PathGuard): Tool {
  return {
    name: 'ls',
    doc: 'List a directory as a nested tree of {name, path, type, size, children}, breadth first up to `depth` levels and `limit` entries (truncated says the limit cut it). Hidden entries are left out unless is_hidden; .gitignore rules apply inside a git repository unless is_respect_gitignore=False.',
    signature: SIGNATURE,
    async run(args) {
      const { positional, kwargs } = splitArgs(args)
      const a = parseArgs('ls', SIGNATURE, Args, bindNames('ls', SIGNATURE, ['path'], positional, kwargs))
      const o = await openForRead(guard, a.path, 'ls')
      try {
        if (o.kind !== 'directory') {
          throw new VisError('tool.not-a-directory', `ls: '${a.path}' is a file; use cat to read it`, {
            op: 'ls',
            path: a.path,
          })
        }
        const r = await walkTree(o.fh, o.real, (p) => guard.display(p), {
          hidden: a.is_hidden,
          gitignore: a.is_respect_gitignore,
          limit: await guard.rootOf(o.real),
          skip: await guard.realHidden(),
          ignoreFiles: ignoreReader(guard),
          depth: a.depth,
          maxEntries: a.limit,
        })
        return { ...r.tree, entries: r.entries, truncated: r.truncated }
      } finally {
        await o.fh.close()
      }
    },
  }
}

// The arguments by name, for surfaces that describe tools with JSON Schema (MCP).
export { Args as LsArgsSchema }
