import { constants as C } from 'node:fs'
import { open } from 'node:fs/promises'
import { z } from 'zod'
import { checkpoint } from '../../util/check-use-hook.js'
import { VisError } from '../../util/errors.js'
import { Pacer } from '../../util/pacer.js'
import { badArgs, parseArgs, splitArgs } from '../args.js'
import type { Json, Tool } from '../types.js'
import { commitAll, type PendingWrite } from './commit.js'
import { LineIndex } from './line-index.js'
import { lineHash, parseAnchor, renderLine, splitLines } from './lines.js'
import { at, type ParentRef, type PathGuard } from './paths.js'
import { readTextFrom } from './read.js'
import { checkSyntax } from './syntax.js'

const SIGNATURE = '(edits, /)'
// How far (in lines) a stale anchor is looked for by its hash.
export const RELOCATE_WINDOW = 200
const SHOW_AROUND = 3
// Lines one patch call's whitespace-tolerant searches may normalise and compare, all edits
// together (each file's lines are normalised once, and count).
export const SEARCH_BUDGET = 4_000_000
// The tolerant search normalises the file's text: past this size it is not offered.
export const SEARCH_MAX_TOLERANT_CHARS = 4 * 1024 * 1024

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
  // The original's lines, counted once (a file may hold millions: never split into an array).
  index: LineIndex
  eol: '\n' | '\r\n'
  finalEol: boolean
  // The original's lines with blanks collapsed, once a tolerant search needed them.
  normalised?: string[]
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

// What one call may still spend on the host's event loop: the tolerant searches' budget, and the
// Pacer that lets the loop run while a large file is counted, normalised or searched.
interface Work {
  left: number
  pace: Pacer
}

async function patch(guard: PathGuard, edits: EditT[]): Promise<{ [key: string]: Json }> {
  const files = new Map<string, FileState>()
  const work: Work = { left: SEARCH_BUDGET, pace: new Pacer() }
  try {
    for (const [i, e] of edits.entries()) {
      const f = await load(guard, files, e.path, work.pace)
      f.ranges.push('search' in e ? await searchRange(f, e, i, work) : anchorRange(f, e, i))
    }
    const writes: PendingWrite[] = []
    const report: { [key: string]: Json }[] = []
    for (const f of files.values()) {
      const { text, changed } = await apply(f, work.pace)
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

async function load(
  guard: PathGuard,
  files: Map<string, FileState>,
  path: string,
  pace: Pacer,
): Promise<FileState> {
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
      index: await LineIndex.of(original, pace),
      eol: original.includes('\r\n') ? '\r\n' : '\n',
      finalEol: original.endsWith('\n'),
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

function around(index: LineIndex, line: number): string {
  const from = Math.max(1, line - SHOW_AROUND)
  const to = Math.min(index.total, line + SHOW_AROUND)
  return index
    .lines(from, to)
    .map((t, k) => renderLine(from + k, t))
    .join('\n')
}

// Finds the line an anchor names now: where it says when its hash still
// matches, else the nearest line with that hash within the window.
function locate(f: FileState, anchor: string, edit: number): number {
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
  const total = f.index.total
  // Only the window's lines are taken from the text.
  const lo = Math.max(1, a.line - RELOCATE_WINDOW)
  const hi = Math.min(total, a.line + RELOCATE_WINDOW)
  const window = lo <= hi ? f.index.lines(lo, hi) : []
  const hashAt = (k: number) => (k >= lo && k <= hi ? lineHash(window[k - lo]!) : undefined)
  if (hashAt(a.line) === a.hash) return a.line
  for (let d = 1; d <= RELOCATE_WINDOW; d++) {
    const up = a.line - d
    const down = a.line + d
    const atUp = hashAt(up) === a.hash
    const atDown = hashAt(down) === a.hash
    if (atUp && atDown) break
    if (atUp || atDown) {
      const now = atUp ? up : down
      f.relocated.push({ anchor, line: now })
      return now
    }
  }
  const shown = Math.min(Math.max(1, a.line), Math.max(1, total))
  const current = total ? around(f.index, shown) : '(the file is empty)'
  throw new VisError(
    'tool.anchor-stale',
    `patch: anchor ${anchor} in '${f.path}' no longer matches its line and was not found nearby; nothing was changed. Current text around line ${a.line}:\n${current}`,
    { op: 'patch', path: f.path, anchor, current },
  )
}

// The offset just past line k's text (before its line break).
const lineEnd = (index: LineIndex, k: number) => index.start(k) + index.line(k).length

function toEol(text: string, eol: string): string {
  return text.replace(/\r?\n/g, eol)
}

function anchorRange(f: FileState, e: z.infer<typeof AnchorEdit>, edit: number): Range {
  const { index, eol } = f
  const from = locate(f, e.from_anchor, edit)
  const to = e.to_anchor === undefined ? from : locate(f, e.to_anchor, edit)
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
  let start = index.start(from)
  let end = lineEnd(index, to)
  let text = e.replace
  if (text === '') {
    // Deleting lines removes their line breaks too.
    if (to < index.total || f.finalEol) end = to < index.total ? index.start(to + 1) : f.original.length
    else if (from > 1) start = lineEnd(index, from - 1)
  } else {
    text = toEol(text.endsWith('\n') ? text.slice(0, text.endsWith('\r\n') ? -2 : -1) : text, eol)
  }
  return { start, end, text, edit }
}

const normWs = (s: string) => s.trim().replace(/\s+/g, ' ')

function tooCostly(f: FileState, edit: number, wantLines: number, why: string): VisError {
  return new VisError(
    'tool.search-too-costly',
    `patch: edit ${edit}: the whitespace-tolerant search for ${wantLines} lines in '${f.path}' (${f.index.total} lines) ${why}; the search text is not in the file as written, so give it exactly as the file has it, or a shorter, more specific search, or use anchors; nothing was changed`,
    { op: 'patch', path: f.path },
  )
}

// The file's lines with blanks collapsed, made once per file and paid for from the call's budget
// before any is made: a 32 MiB file may hold 8 million lines.
async function normalised(f: FileState, edit: number, wantLines: number, work: Work): Promise<string[]> {
  if (f.normalised) return f.normalised
  if (f.original.length > SEARCH_MAX_TOLERANT_CHARS)
    throw tooCostly(f, edit, wantLines, `is not made in a file over ${SEARCH_MAX_TOLERANT_CHARS} characters`)
  if (f.index.total > work.left)
    throw tooCostly(f, edit, wantLines, `would compare more than ${SEARCH_BUDGET} lines`)
  work.left -= f.index.total
  const out: string[] = []
  for (let k = 1; k <= f.index.total; k += NORMALISE_LINES) {
    const chunk = f.index.lines(k, Math.min(f.index.total, k + NORMALISE_LINES - 1))
    let chars = 0
    for (const line of chunk) {
      out.push(normWs(line))
      chars += line.length
    }
    const wait = work.pace.charge(chars + chunk.length)
    if (wait) await wait
  }
  f.normalised = out
  return out
}
const NORMALISE_LINES = 4096

async function searchRange(
  f: FileState,
  e: z.infer<typeof SearchEdit>,
  edit: number,
  work: Work,
): Promise<Range> {
  const { index, eol } = f
  const search = toEol(e.search, eol)
  const first = f.original.indexOf(search)
  if (first >= 0) {
    const second = f.original.indexOf(search, first + 1)
    if (second >= 0) {
      throw new VisError(
        'tool.match-ambiguous',
        `patch: edit ${edit}: the search text occurs more than once in '${f.path}' (lines ${index.lineAt(first)} and ${index.lineAt(second)}); add surrounding lines or use anchors`,
        { op: 'patch', path: f.path },
      )
    }
    return { start: first, end: first + search.length, text: toEol(e.replace, eol), edit }
  }
  // Whitespace-tolerant: compare whole lines with runs of blanks collapsed.
  const want = splitLines(e.search).lines.map(normWs)
  while (want.length && want[0] === '') want.shift()
  while (want.length && want[want.length - 1] === '') want.pop()
  const found: number[] = []
  // Both texts are the sandbox's and this runs on the host's event loop:
  // a file of N equal lines and a search of N/2 of them then a miss costs
  // N²/4 comparisons, so the work is bounded and past it refused.
  if (want.length) {
    const have = await normalised(f, edit, want.length, work)
    for (let i = 0; i + want.length <= have.length; i++) {
      let k = 0
      while (k < want.length && have[i + k] === want[k]) k++
      work.left -= k + 1
      if (work.left < 0) throw tooCostly(f, edit, want.length, `compares more than ${SEARCH_BUDGET} lines`)
      const wait = work.pace.charge(k + 1)
      if (wait) await wait
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
  const fileIndent = /^\s*/.exec(index.line(i + 1))![0]
  const replaceLines = splitLines(e.replace).lines.map((l) =>
    searchIndent !== fileIndent && l.startsWith(searchIndent) ? fileIndent + l.slice(searchIndent.length) : l,
  )
  return {
    start: index.start(i + 1),
    end: lineEnd(index, i + want.length),
    text: replaceLines.join(eol),
    edit,
  }
}

// Applies a file's ranges from the end so earlier offsets stay valid, and
// reports the new text of every changed region with fresh anchors.
async function apply(
  f: FileState,
  pace: Pacer,
): Promise<{ text: string; changed: { [key: string]: Json }[] }> {
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
  const index = await LineIndex.of(text, pace)
  let shift = 0
  for (const r of ranges) {
    const start = r.start + shift
    shift += r.text.length - (r.end - r.start)
    const fromLine = index.lineAt(start)
    const toLine = r.text ? fromLine + r.text.split('\n').length - 1 : fromLine - 1
    const shown = Math.min(toLine, index.total)
    const lines = index.lines(fromLine, shown).map((t, k) => renderLine(fromLine + k, t))
    changed.push({ edit: r.edit, from_line: fromLine, to_line: Math.max(fromLine - 1, toLine), lines })
  }
  return { text, changed }
}

// The arguments by name, for surfaces that describe tools with JSON Schema (MCP).
export const PatchArgsSchema = z.object({ edits: Edits }).strict()
