import { constants as C } from 'node:fs'
import { open } from 'node:fs/promises'
import { z } from 'zod'
import { checkpoint } from '../../util/check-use-hook.js'
import { VisError } from '../../util/errors.js'
import { badArgs, parseArgs, splitArgs } from '../args.js'
import type { Json, Tool } from '../types.js'
import { commitAll, type PendingWrite } from './commit.js'
import { lineHash, parseAnchor, renderLine, splitLines } from './lines.js'
import { at, type ParentRef, type PathGuard } from './paths.js'
import { readTextFrom } from './read.js'
import { checkSyntax } from './syntax.js'

const SIGNATURE = '(edits, /)'
// How far (in lines) a stale anchor is looked for by its hash.
export const RELOCATE_WINDOW = 200
const SHOW_AROUND = 3
// Line comparisons one whitespace-tolerant search may make (tens of ms).
export const SEARCH_BUDGET = 4_000_000

const AnchorEdit = z
  .object({
    path: z.string().min(1),
    from_anchor: z.string(),
    to_anchor: z.string().optional(),
    replace: z.string(),
  })
  .strict()
const SearchEdit = z
  .object({ path: z.string().min(1), search: z.string().min(1), replace: z.string() })
  .strict()
const Edit = z.union([AnchorEdit, SearchEdit])
const Edits = z.array(Edit).min(1)
type EditT = z.infer<typeof Edit>

export const patchDoc = `Edit files atomically (all edits or none). Each edit is {path, from_anchor, to_anchor?, replace}: the lines from from_anchor to to_anchor (inclusive; default just that line) become 'replace' ('' deletes them); anchors come from cat/grep. An anchor whose line changed is found again by its hash nearby, or refused with the current text. Or {path, search, replace}: an exact, unique text match (whitespace-tolerant when no exact match exists). Edits that would break the syntax of a parsing .py/.ts/.js/.json file are refused; files over 256 KiB (.py, .json) or 128 KiB (.ts/.js) are not checked (the result's syntax_unchecked says why). Returns the changed lines with their new anchors.`

interface Range {
  start: number
  end: number
  text: string
  edit: number
}

interface FileState {
  ref: ParentRef
  path: string
  original: string
  mode: number
  ranges: Range[]
  relocated: { [key: string]: Json }[]
}

export function patchTool(guard: PathGuard): Tool {
  return {
    name: 'patch',
    doc: patchDoc,
    signature: SIGNATURE,
    writes: true,
    async run(args) {
      const { positional, kwargs } = splitArgs(args)
      let raw: unknown = positional[0]
      if (positional.length === 0) raw = 'edits' in kwargs ? kwargs.edits : [kwargs]
      else if (Object.keys(kwargs).length) throw badArgs('patch', SIGNATURE, 'pass the edits as one list')
      const edits = parseArgs('patch', SIGNATURE, Edits, raw)
      return patch(guard, edits)
    },
  }
}

async function patch(guard: PathGuard, edits: EditT[]): Promise<{ [key: string]: Json }> {
  const files = new Map<string, FileState>()
  try {
    for (const [i, e] of edits.entries()) {
      const f = await load(guard, files, e.path)
      f.ranges.push('search' in e ? searchRange(f, e, i) : anchorRange(f, e, i))
    }
    const writes: PendingWrite[] = []
    const report: { [key: string]: Json }[] = []
    for (const f of files.values()) {
      const { text, changed } = apply(f)
      // A file that did not parse before is not held to parsing after.
      const before = await checkSyntax(f.ref.real, f.original)
      const after = before.error === undefined && !before.unchecked ? await checkSyntax(f.ref.real, text) : {}
      const unchecked = before.unchecked ?? after.unchecked
      if (after.error !== undefined) {
        throw new VisError(
          'tool.syntax',
          `patch: the edits would make '${f.path}' stop parsing (${after.error}); nothing was changed`,
          { op: 'patch', path: f.path, error: after.error },
        )
      }
      writes.push({
        dir: f.ref.dir,
        name: f.ref.name,
        path: f.path,
        text,
        mode: f.mode,
        previous: f.original,
        op: 'patch',
      })
      report.push({
        path: f.path,
        edits: f.ranges.length,
        changed,
        relocated: f.relocated,
        ...(unchecked ? { syntax_unchecked: unchecked } : {}),
      })
    }
    await commitAll(writes)
    return { files: report }
  } finally {
    for (const f of files.values()) await f.ref.dir.close()
  }
}

async function load(guard: PathGuard, files: Map<string, FileState>, path: string): Promise<FileState> {
  const ref = await guard.parent(path, 'patch', true)
  const known = files.get(ref.real)
  if (known) {
    await ref.dir.close()
    return known
  }
  let fh: Awaited<ReturnType<typeof open>> | undefined
  try {
    // The entry may have become a link since parent() looked: O_NOFOLLOW refuses it.
    await checkpoint('tool.entry', ref.real)
    fh = await open(at(ref.dir, ref.name), C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK)
  } catch (err) {
    await ref.dir.close()
    throw guard.fsError(err, path, 'patch')
  }
  try {
    const st = await fh.stat()
    if (!st.isFile())
      throw new VisError('tool.not-a-file', `patch: '${path}' is not a regular file`, { path })
    const original = await readTextFrom(fh, st.size, path, 'patch')
    const f: FileState = {
      ref,
      path: await guard.display(ref.real),
      original,
      // Never set-id bits (see write in mutate.ts).
      mode: st.mode & 0o777,
      ranges: [],
      relocated: [],
    }
    files.set(ref.real, f)
    return f
  } catch (err) {
    await ref.dir.close()
    throw err
  } finally {
    await fh.close()
  }
}

function around(lines: string[], line: number): string {
  const from = Math.max(1, line - SHOW_AROUND)
  const to = Math.min(lines.length, line + SHOW_AROUND)
  const out: string[] = []
  for (let k = from; k <= to; k++) out.push(renderLine(k, lines[k - 1]!))
  return out.join('\n')
}

// Finds the line an anchor names now: where it says when its hash still
// matches, else the nearest line with that hash within the window.
function locate(f: FileState, lines: string[], anchor: string, edit: number): number {
  const a = parseAnchor(anchor)
  if (!a) {
    throw new VisError(
      'tool.bad-args',
      `patch: edit ${edit}: '${anchor}' is not an anchor like '12:3fa9c1'`,
      {
        op: 'patch',
        path: f.path,
      },
    )
  }
  if (a.line >= 1 && a.line <= lines.length && lineHash(lines[a.line - 1]!) === a.hash) return a.line
  for (let d = 1; d <= RELOCATE_WINDOW; d++) {
    const up = a.line - d
    const down = a.line + d
    const atUp = up >= 1 && up <= lines.length && lineHash(lines[up - 1]!) === a.hash
    const atDown = down >= 1 && down <= lines.length && lineHash(lines[down - 1]!) === a.hash
    if (atUp && atDown) break
    if (atUp || atDown) {
      const now = atUp ? up : down
      f.relocated.push({ anchor, line: now })
      return now
    }
  }
  const shown = Math.min(Math.max(1, a.line), Math.max(1, lines.length))
  const current = lines.length ? around(lines, shown) : '(the file is empty)'
  throw new VisError(
    'tool.anchor-stale',
    `patch: anchor ${anchor} in '${f.path}' no longer matches its line and was not found nearby; nothing was changed. Current text around line ${a.line}:\n${current}`,
    { op: 'patch', path: f.path, anchor, current },
  )
}

// Where each line starts, from the real line breaks (a file may mix LF and CRLF).
function lineStarts(text: string): number[] {
  const starts = [0]
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1)
  return starts
}

function toEol(text: string, eol: string): string {
  return text.replace(/\r?\n/g, eol)
}

function anchorRange(f: FileState, e: z.infer<typeof AnchorEdit>, edit: number): Range {
  const split = splitLines(f.original)
  const { lines, eol } = split
  const from = locate(f, lines, e.from_anchor, edit)
  const to = e.to_anchor === undefined ? from : locate(f, lines, e.to_anchor, edit)
  if (to < from) {
    throw new VisError(
      'tool.bad-args',
      `patch: edit ${edit}: to_anchor (line ${to}) comes before from_anchor (line ${from})`,
      {
        op: 'patch',
        path: f.path,
      },
    )
  }
  const starts = lineStarts(f.original)
  let start = starts[from - 1]!
  let end = starts[to - 1]! + lines[to - 1]!.length
  let text = e.replace
  if (text === '') {
    // Deleting lines removes their line breaks too.
    if (to < lines.length || split.finalEol) end = starts[to] ?? f.original.length
    else if (from > 1) start = starts[from - 2]! + lines[from - 2]!.length
  } else {
    text = toEol(text.endsWith('\n') ? text.slice(0, text.endsWith('\r\n') ? -2 : -1) : text, eol)
  }
  return { start, end, text, edit }
}

const normWs = (s: string) => s.trim().replace(/\s+/g, ' ')

function searchRange(f: FileState, e: z.infer<typeof SearchEdit>, edit: number): Range {
  const { lines, eol } = splitLines(f.original)
  const search = toEol(e.search, eol)
  const first = f.original.indexOf(search)
  if (first >= 0) {
    const second = f.original.indexOf(search, first + 1)
    if (second >= 0) {
      const lineOf = (i: number) => f.original.slice(0, i).split('\n').length
      throw new VisError(
        'tool.match-ambiguous',
        `patch: edit ${edit}: the search text occurs more than once in '${f.path}' (lines ${lineOf(first)} and ${lineOf(second)}); add surrounding lines or use anchors`,
        { op: 'patch', path: f.path },
      )
    }
    return { start: first, end: first + search.length, text: toEol(e.replace, eol), edit }
  }
  // Whitespace-tolerant: compare whole lines with runs of blanks collapsed.
  const want = splitLines(e.search).lines.map(normWs)
  while (want.length && want[0] === '') want.shift()
  while (want.length && want[want.length - 1] === '') want.pop()
  const have = lines.map(normWs)
  const found: number[] = []
  // Both texts are the sandbox's and this runs on the host's event loop:
  // a file of N equal lines and a search of N/2 of them then a miss costs
  // N²/4 comparisons, so the work is bounded and past it refused.
  let budget = SEARCH_BUDGET
  if (want.length) {
    for (let i = 0; i + want.length <= have.length; i++) {
      let k = 0
      while (k < want.length && have[i + k] === want[k]) k++
      budget -= k + 1
      if (budget < 0) {
        throw new VisError(
          'tool.search-too-costly',
          `patch: edit ${edit}: the whitespace-tolerant search for ${want.length} lines in '${f.path}' (${have.length} lines) compares more than ${SEARCH_BUDGET} lines; the search text is not in the file as written, so give it exactly as the file has it, or a shorter, more specific search, or use anchors; nothing was changed`,
          { op: 'patch', path: f.path },
        )
      }
      if (k === want.length) found.push(i)
    }
  }
  if (found.length !== 1) {
    throw new VisError(
      found.length ? 'tool.match-ambiguous' : 'tool.no-match',
      found.length
        ? `patch: edit ${edit}: the search text matches ${found.length} places in '${f.path}' when whitespace is ignored; add surrounding lines or use anchors`
        : `patch: edit ${edit}: the search text was not found in '${f.path}', even ignoring whitespace; cat the file to see its current text; nothing was changed`,
      { op: 'patch', path: f.path },
    )
  }
  const i = found[0]!
  const searchLines = splitLines(e.search).lines
  const firstSearch = searchLines.find((l) => l.trim() !== '') ?? ''
  const searchIndent = /^\s*/.exec(firstSearch)![0]
  const fileIndent = /^\s*/.exec(lines[i]!)![0]
  const replaceLines = splitLines(e.replace).lines.map((l) =>
    searchIndent !== fileIndent && l.startsWith(searchIndent) ? fileIndent + l.slice(searchIndent.length) : l,
  )
  const starts = lineStarts(f.original)
  const last = i + want.length - 1
  return {
    start: starts[i]!,
    end: starts[last]! + lines[last]!.length,
    text: replaceLines.join(eol),
    edit,
  }
}

// Applies a file's ranges from the end so earlier offsets stay valid, and
// reports the new text of every changed region with fresh anchors.
function apply(f: FileState): { text: string; changed: { [key: string]: Json }[] } {
  const ranges = [...f.ranges].sort((a, b) => a.start - b.start)
  for (let i = 1; i < ranges.length; i++) {
    if (ranges[i]!.start < ranges[i - 1]!.end) {
      throw new VisError(
        'tool.bad-args',
        `patch: edits ${ranges[i - 1]!.edit} and ${ranges[i]!.edit} overlap in '${f.path}'; merge them into one edit`,
        { op: 'patch', path: f.path },
      )
    }
  }
  let text = f.original
  for (const r of [...ranges].reverse()) text = text.slice(0, r.start) + r.text + text.slice(r.end)
  // Positions of each replacement in the new text, to show the result.
  const changed: { [key: string]: Json }[] = []
  const newLines = splitLines(text).lines
  let shift = 0
  for (const r of ranges) {
    const start = r.start + shift
    shift += r.text.length - (r.end - r.start)
    const fromLine = text.slice(0, start).split('\n').length
    const toLine = r.text ? fromLine + r.text.split('\n').length - 1 : fromLine - 1
    const lines: string[] = []
    for (let k = fromLine; k <= Math.min(toLine, newLines.length); k++)
      lines.push(renderLine(k, newLines[k - 1]!))
    changed.push({ edit: r.edit, from_line: fromLine, to_line: Math.max(fromLine - 1, toLine), lines })
  }
  return { text, changed }
}

// The arguments by name, for surfaces that describe tools with JSON Schema (MCP).
export const PatchArgsSchema = z.object({ edits: Edits }).strict()
