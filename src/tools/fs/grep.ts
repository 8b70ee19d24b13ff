import { basename, resolve } from 'node:path'
import { z } from 'zod'
import { Pacer } from '../../util/pacer.js'
import { bindNames, parseArgs, splitArgs } from '../args.js'
import type { Json, Tool, ToolContext } from '../types.js'
import { globMatcher } from './glob.js'
import { anchorOf, renderLine } from './lines.js'
import type { PathGuard } from './paths.js'
import {
  BuiltinEngine,
  comparePaths,
  type FileHits,
  findRipgrep,
  RipgrepEngine,
  type SearchEngine,
  type SearchTarget,
} from './search.js'

const SIGNATURE =
  "(query, /, *, paths=['.'], include=None, context=0, is_files_only=False, offset=0, limit=50)"
export const GREP_MAX_HITS = 5000
const MAX_NAME_MATCHES = 20
const MAX_TEXT = 500

const StrOrList = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)])
const Args = z
  .object({
    query: StrOrList,
    paths: StrOrList.default('.'),
    include: StrOrList.optional(),
    context: z.number().int().min(0).max(20).default(0),
    is_files_only: z.boolean().default(false),
    offset: z.number().int().min(0).default(0),
    limit: z.number().int().min(1).max(500).default(50),
  })
  .strict()

const list = (v: string | string[] | undefined): string[] =>
  v === undefined ? [] : Array.isArray(v) ? v : [v]

export type GrepEngineChoice = 'auto' | 'ripgrep' | 'builtin'

export function pickEngine(guard: PathGuard, choice: GrepEngineChoice = 'auto'): SearchEngine {
  const rg = findRipgrep()
  if (choice === 'builtin' || (choice === 'auto' && !rg)) return new BuiltinEngine(guard)
  if (!rg) throw new Error('ripgrep was asked for but `rg` is not on PATH')
  return new RipgrepEngine(rg)
}

export function grepTool(guard: PathGuard, choice: GrepEngineChoice = 'auto'): Tool {
  const engine = pickEngine(guard, choice)
  return {
    name: 'grep',
    doc: `Search file contents for a substring, or any of a list of substrings. Smart case: case-insensitive unless a term has an upper-case letter. Hits come with anchors usable by patch(), plus 'context' lines around them; 'name_matches' ranks files whose path contains a term. Page with offset/limit ('next_offset' continues). is_files_only lists matching files with counts instead of hits. include filters by glob ('*.ts'; a glob with '/' matches the workspace-relative path). Hidden and .gitignored files are skipped.`,
    signature: SIGNATURE,
    async run(args, ctx) {
      const { positional, kwargs } = splitArgs(args)
      const a = parseArgs(
        'grep',
        SIGNATURE,
        Args,
        bindNames('grep', SIGNATURE, ['query'], positional, kwargs),
      )
      return grep(guard, engine, a, ctx)
    },
  }
}

async function grep(
  guard: PathGuard,
  engine: SearchEngine,
  a: z.infer<typeof Args>,
  ctx: ToolContext,
): Promise<{ [key: string]: Json }> {
  const terms = list(a.query)
  const ignoreCase = terms.every((t) => t === t.toLowerCase())
  const targets: SearchTarget[] = []
  try {
    for (const p of list(a.paths)) {
      const { fh, real } = await guard.open(p, 'grep')
      targets.push({ abs: real, fh, dir: (await fh.stat()).isDirectory() })
    }
    const skip = await guard.realHidden()
    // A confined session's ripgrep runs in its tool jail (search.ts RipgrepEngine).
    const jail = ctx.spawn
      ? { spawn: ctx.spawn, roots: guard.roots.map((r) => resolve(r)), realRoots: await guard.realRoots() }
      : undefined
    const spec = { terms, ignoreCase, targets, context: a.context, maxHits: GREP_MAX_HITS, skip, jail }
    const explicit = new Set(targets.filter((t) => !t.dir).map((t) => t.abs))
    const include = globMatcher(list(a.include))
    // Each include test costs up to the list's size times the path's (both the sandbox's):
    // it lets the host's event loop run once a slice of that work has gone by.
    const pace = new Pacer()
    const keep = async (abs: string) => {
      if (explicit.has(abs)) return true
      return include.paced(await guard.display(abs), pace)
    }

    const found = await engine.search(spec, ctx.signal)
    const files: FileHits[] = []
    for (const f of found.files) if (await keep(f.abs)) files.push(f)
    files.sort((x, y) => comparePaths(x.abs, y.abs))

    const names: string[] = []
    for (const abs of await engine.files(spec, ctx.signal)) if (await keep(abs)) names.push(abs)

    const base = {
      query: terms,
      case_sensitive: !ignoreCase,
      engine: engine.name,
      name_matches: await rankNames(guard, names, terms, ignoreCase),
      capped: found.capped,
    }
    if (a.is_files_only) {
      const all = files.map((f) => ({ abs: f.abs, n: f.matches.length }))
      const page = all.slice(a.offset, a.offset + a.limit)
      return {
        ...base,
        total: all.length,
        offset: a.offset,
        next_offset: a.offset + a.limit < all.length ? a.offset + a.limit : null,
        files: await Promise.all(page.map(async (f) => ({ path: await guard.display(f.abs), matches: f.n }))),
        hits: [],
      }
    }
    const all = files.flatMap((f) => f.matches.map((line) => ({ f, line })))
    const page = all.slice(a.offset, a.offset + a.limit)
    const hits: { [key: string]: Json }[] = []
    for (const { f, line } of page) hits.push(await renderHit(guard, f, line, a.context))
    return {
      ...base,
      total: all.length,
      offset: a.offset,
      next_offset: a.offset + a.limit < all.length ? a.offset + a.limit : null,
      files: [],
      hits,
    }
  } finally {
    for (const t of targets) await t.fh.close()
  }
}

function clip(text: string): string {
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}… [${text.length - MAX_TEXT} more chars]` : text
}

async function renderHit(guard: PathGuard, f: FileHits, line: number, context: number) {
  const text = f.lines.get(line) ?? ''
  const around = (from: number, to: number) => {
    const out: string[] = []
    for (let k = from; k <= to; k++) {
      const t = f.lines.get(k)
      if (t !== undefined) out.push(clip(renderLine(k, t)))
    }
    return out
  }
  return {
    path: await guard.display(f.abs),
    line,
    anchor: anchorOf(line, text),
    text: clip(text),
    before: around(line - context, line - 1),
    after: around(line + 1, line + context),
  }
}

// File-name matches, best first: the name is a term, starts with one,
// contains one, then the directory part contains one; shorter paths first.
async function rankNames(guard: PathGuard, files: string[], terms: string[], ignoreCase: boolean) {
  const norm = (s: string) => (ignoreCase ? s.toLowerCase() : s)
  const ts = terms.map(norm)
  const scored: { path: string; score: number }[] = []
  for (const abs of files) {
    const path = await guard.display(abs)
    const name = norm(basename(path))
    const stem = name.replace(/\.[^.]*$/, '')
    const full = norm(path)
    let score = Number.POSITIVE_INFINITY
    for (const t of ts) {
      if (name === t || stem === t) score = Math.min(score, 0)
      else if (name.startsWith(t)) score = Math.min(score, 1)
      else if (name.includes(t)) score = Math.min(score, 2)
      else if (full.includes(t)) score = Math.min(score, 3)
    }
    if (score !== Number.POSITIVE_INFINITY) scored.push({ path, score })
  }
  scored.sort((x, y) => x.score - y.score || x.path.length - y.path.length || (x.path < y.path ? -1 : 1))
  return scored.slice(0, MAX_NAME_MATCHES).map((s) => ({ path: s.path, rank: s.score }))
}

// The arguments by name, for surfaces that describe tools with JSON Schema (MCP).
export { Args as GrepArgsSchema }
