import { z } from 'zod'
import { bindNames, parseArgs, splitArgs } from '../args.js'
import type { Json, Tool } from '../types.js'
import { LineIndex } from './line-index.js'
import { renderLine } from './lines.js'
import type { PathGuard } from './paths.js'
import { listDirectory, openForRead, readTextFrom } from './read.js'

const SIGNATURE = '(path, offset=None, n=None, /, *, tail=None)'
export const CAT_DEFAULT_LINES = 2000
export const CAT_MAX_CHARS = 64 * 1024
export const CAT_MAX_LINE_CHARS = 2000
// Entries of a directory cat lists; ls and grep reach into bigger ones.
export const CAT_MAX_ENTRIES = 1000

const Args = z
  .object({
    path: z.string().min(1),
    offset: z.number().int().min(0).optional(),
    n: z.number().int().min(0).optional(),
    tail: z.number().int().min(0).optional(),
  })
  .strict()
  .refine((a) => a.tail === undefined || a.offset === undefined, {
    message: 'give either offset or tail, not both',
  })

export const catDoc = `Read a text file as lines prefixed with anchors '<lineno>:<hash>|'. cat(path) from the start, cat(path, n) the first n lines, cat(path, offset, n) n lines from line number offset (1-based), cat(path, tail=n) the last n lines. Use the anchors with patch(). 'next_offset' is where to continue when more lines remain; 'truncated' says lines or output were cut. A directory gives a shallow listing of up to 1000 entries ('truncated' says some were left out; narrow with grep or ls); binary files are refused with their size and type.`

export function catTool(guard: PathGuard): Tool {
  return {
    name: 'cat',
    doc: catDoc,
    signature: SIGNATURE,
    async run(args) {
      const { positional, kwargs } = splitArgs(args)
      // cat(path, n) reads the first n lines; cat(path, offset, n) a window.
      const names = positional.length === 2 ? ['path', 'n'] : ['path', 'offset', 'n']
      const a = parseArgs('cat', SIGNATURE, Args, bindNames('cat', SIGNATURE, names, positional, kwargs))
      const o = await openForRead(guard, a.path, 'cat')
      try {
        const shown = await guard.display(o.real)
        if (o.kind === 'directory') {
          const { entries, truncated } = await listDirectory(o.fh, CAT_MAX_ENTRIES)
          return { path: shown, type: 'directory', entries, truncated }
        }
        const text = await readTextFrom(o.fh, o.size, a.path, 'cat')
        return window(shown, o.size, await LineIndex.of(text), a)
      } finally {
        await o.fh.close()
      }
    },
  }
}

// One page of the file: only its lines are taken from the text (the index counted the rest).
function window(
  path: string,
  size: number,
  index: LineIndex,
  a: z.infer<typeof Args>,
): { [key: string]: Json } {
  const total = index.total
  const want = a.tail ?? a.n ?? CAT_DEFAULT_LINES
  let start = a.tail !== undefined ? Math.max(1, total - a.tail + 1) : Math.max(1, a.offset ?? 1)
  if (a.tail === 0) start = total + 1
  let truncated = false
  const out: string[] = []
  let chars = 0
  let line = start
  const limit = Math.min(total, start + Math.min(want, CAT_DEFAULT_LINES) - 1)
  const page = index.lines(start, limit)
  for (; line <= limit; line++) {
    let t = page[line - start]!
    let rendered = renderLine(line, t)
    if (t.length > CAT_MAX_LINE_CHARS) {
      // The anchor still hashes the whole line, so it stays patchable.
      t = `${t.slice(0, CAT_MAX_LINE_CHARS)}… [${t.length - CAT_MAX_LINE_CHARS} more chars]`
      rendered = `${rendered.slice(0, rendered.indexOf('|') + 1)}${t}`
      truncated = true
    }
    if (out.length > 0 && chars + rendered.length + 1 > CAT_MAX_CHARS) {
      truncated = true
      break
    }
    out.push(rendered)
    chars += rendered.length + 1
  }
  const next = line <= total ? line : null
  return {
    path,
    type: 'file',
    size,
    total_lines: total,
    start_line: out.length ? start : null,
    end_line: out.length ? line - 1 : null,
    content: out.join('\n'),
    next_offset: next,
    // Asking for more lines than the cap, with more left, is a cut too.
    truncated: truncated || (want > CAT_DEFAULT_LINES && next !== null && line <= start + want - 1),
  }
}

// The arguments by name, for surfaces that describe tools with JSON Schema (MCP).
export { Args as CatArgsSchema }
