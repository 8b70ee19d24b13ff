import { constants as C } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import { sep } from 'node:path'
import { z } from 'zod'
import { closeFd, openAt2, readCapped, STRICT, statFd } from '../../confinement/beneath.js'
import { checkpoint } from '../../util/check-use-hook.js'
import { isVisError, VisError } from '../../util/errors.js'
import { bindNames, parseArgs, splitArgs } from '../args.js'
import { SNIFF_BYTES, sniffBinary } from '../fs/binary.js'
import { ignoreReader } from '../fs/gitignore.js'
import type { PathGuard } from '../fs/paths.js'
import { openForRead, readTextFrom } from '../fs/read.js'
import { listFiles } from '../fs/walk.js'
import type { Json, Tool, ToolContext } from '../types.js'
import { elidedNote } from './deep-python.js'
import { LANGUAGES, languageFor } from './languages.js'
import { ParseTimeout, timeoutError } from './parse.js'
import { parseOffThread } from './parse-pool.js'
import { type Definition, renderDefinition } from './skeleton.js'

const SIGNATURE = "(path='.', /, *, limit=200)"
// Bounds: bytes per file, parse time per file and per call, what a call returns. Parsing runs at
// roughly 0.4 MB/s (Python, unloaded 2-core host), so a file at the byte bound fits its time.
export const INDEX_MAX_FILE_BYTES = 1024 * 1024
export const INDEX_FILE_TIMEOUT_MS = 5000
export const INDEX_TREE_TIMEOUT_MS = 15_000
export const INDEX_MAX_DEFS = 3000
export const INDEX_MAX_CHARS = 64 * 1024
const MAX_DEPTH = 8
let fileTimeoutMs = INDEX_FILE_TIMEOUT_MS
let treeTimeoutMs = INDEX_TREE_TIMEOUT_MS

// Test-only: shorter parse deadlines, so the bound can be shown on a small file (undefined
// restores the defaults). Production code never calls it.
export function setIndexTimeoutsForTest(ms: { file: number; tree: number } | undefined): void {
  fileTimeoutMs = ms?.file ?? INDEX_FILE_TIMEOUT_MS
  treeTimeoutMs = ms?.tree ?? INDEX_TREE_TIMEOUT_MS
}
const MAX_NODES = 2_000_000
// Files a directory walk looks at, before the language filter.
const WALK_MAX = 20_000

const Args = z
  .object({
    path: z.string().min(1).default('.'),
    limit: z.number().int().min(1).max(2000).default(200),
  })
  .strict()

export const indexDoc = `A file's skeleton without reading it: index(path) gives one line per definition (class, function, method, type...), nested by indentation, as '<kind> <name>  <signature>  @<first anchor>..<last anchor>'. The anchors are the ones cat prints for those lines, so patch([{path, from_anchor: first, to_anchor: last, replace: new_code}]) replaces a whole definition. 'skeleton' is the text; 'definitions' has the same as records (kind, name, signature, depth, start, end, from, to). index(dir) lists the source files below a directory (.gitignore honoured, at most 'limit' files) with their top-level definitions. Python, TypeScript/TSX, JavaScript, Go, Rust, Java, C and C++ (each needs its grammar package; the error names it).`

const known = () => [...new Set(LANGUAGES.flatMap((l) => l.extensions))].join(' ')

export function indexTool(guard: PathGuard): Tool {
  return {
    name: 'index',
    doc: indexDoc,
    signature: SIGNATURE,
    async run(args, ctx) {
      const { positional, kwargs } = splitArgs(args)
      const a = parseArgs(
        'index',
        SIGNATURE,
        Args,
        bindNames('index', SIGNATURE, ['path'], positional, kwargs),
      )
      const o = await openForRead(guard, a.path, 'index')
      try {
        const shown = await guard.display(o.real)
        if (o.kind === 'directory') return await indexTree(guard, o.fh, o.real, shown, a.limit, ctx)
        return await indexFile(o.fh, o.size, a.path, shown)
      } finally {
        await o.fh.close()
      }
    },
  }
}

async function indexFile(
  fh: FileHandle,
  size: number,
  path: string,
  shown: string,
): Promise<{ [key: string]: Json }> {
  const lang = languageFor(path)
  if (!lang) {
    throw new VisError(
      'tool.unsupported-language',
      `index: '${path}' is not a source file the index reads (it knows ${known()}); use cat or grep`,
      { op: 'index', path },
    )
  }
  if (size > INDEX_MAX_FILE_BYTES) {
    throw new VisError(
      'tool.too-large',
      `index: '${path}' is ${size} bytes, more than the ${INDEX_MAX_FILE_BYTES}-byte limit of the index; use grep to find the definitions you need`,
      { op: 'index', path, size },
    )
  }
  const text = await readTextFrom(fh, size, path, 'index')
  let o: Awaited<ReturnType<typeof parseOffThread>>
  try {
    o = await parseOffThread(lang, text, fileTimeoutMs, limits(MAX_DEPTH), 'index', path)
  } catch (err) {
    if (err instanceof ParseTimeout) throw timeoutError('index', path, fileTimeoutMs)
    throw err
  }
  const { text: skeleton, shown: count } = render(o.defs.map(renderDefinition))
  const note = o.elided ? elidedNote(o.elided) : undefined
  return {
    path: shown,
    type: 'file',
    language: lang.id,
    total_lines: o.totalLines,
    skeleton: note ? (skeleton ? `${skeleton}\n${note}` : note) : skeleton,
    definitions: o.defs.slice(0, count).map(record),
    truncated: o.truncated || count < o.defs.length,
    ...(o.elided ? { elided: { ...o.elided } } : {}),
  }
}

function limits(maxDepth: number) {
  return { maxDepth, maxDefs: INDEX_MAX_DEFS, maxNodes: MAX_NODES }
}

function record(d: Definition): { [key: string]: Json } {
  return { ...d }
}

// Lines up to the output bound; `shown` says how many fit.
function render(lines: string[]): { text: string; shown: number } {
  let chars = 0
  let shown = 0
  for (const l of lines) {
    if (shown > 0 && chars + l.length + 1 > INDEX_MAX_CHARS) break
    chars += l.length + 1
    shown++
  }
  return { text: lines.slice(0, shown).join('\n'), shown }
}

// A directory: each source file below it with its top-level definitions. Files are read
// beneath the directory's verified handle with no link on the way, as grep reads them.
async function indexTree(
  guard: PathGuard,
  dir: FileHandle,
  real: string,
  shown: string,
  limit: number,
  ctx: ToolContext,
): Promise<{ [key: string]: Json }> {
  const all = await listFiles(
    dir,
    real,
    {
      hidden: false,
      gitignore: true,
      limit: await guard.rootOf(real),
      skip: await guard.realHidden(),
      ignoreFiles: ignoreReader(guard),
    },
    WALK_MAX,
  )
  const sources = all.filter((f) => languageFor(f))
  // The call's parse budget, spent file by file (the thread's start is not parse time).
  let spent = 0
  const lines: string[] = []
  const files: { [key: string]: Json }[] = []
  const missing = new Map<string, number>()
  const skipped: { [key: string]: Json }[] = []
  let chars = 0
  let truncated = sources.length > limit || all.length >= WALK_MAX
  for (const abs of sources.slice(0, limit)) {
    if (ctx.signal.aborted)
      throw new VisError('tool.aborted', 'index: the call was cancelled', { op: 'index' })
    if (spent >= treeTimeoutMs) {
      truncated = true
      break
    }
    const lang = languageFor(abs)!
    const path = await guard.display(abs)
    // The walk listed this file by name; the sandbox may swap a directory on its path for a
    // link before it is read, so it is read beneath the directory's handle, never by path.
    await checkpoint('index.read', abs)
    const text = await readBelow(dir, real, abs)
    if (typeof text !== 'string') {
      skipped.push({ path, reason: text.reason })
      continue
    }
    let defs: Definition[]
    let note: string | undefined
    const timeoutMs = Math.min(fileTimeoutMs, treeTimeoutMs - spent)
    try {
      const o = await parseOffThread(lang, text, timeoutMs, limits(0), 'index', path)
      spent += o.parseMs
      defs = o.defs
      if (o.elided) note = `  ${elidedNote(o.elided)}`
    } catch (err) {
      if (err instanceof ParseTimeout) {
        spent += timeoutMs
        skipped.push({ path, reason: `parsing took longer than ${timeoutMs} ms` })
        truncated = true
        continue
      }
      const pkg = isVisError(err, 'tool.no-grammar') ? err.context.package : undefined
      if (typeof pkg === 'string') {
        missing.set(pkg, (missing.get(pkg) ?? 0) + 1)
        continue
      }
      throw err
    }
    const block = [path, ...defs.map((d) => `  ${renderDefinition(d)}`), ...(note ? [note] : [])]
    const size = block.reduce((n, l) => n + l.length + 1, 0)
    if (files.length > 0 && chars + size > INDEX_MAX_CHARS) {
      truncated = true
      break
    }
    chars += size
    lines.push(...block)
    files.push({ path, language: lang.id, definitions: defs.length })
  }
  return {
    path: shown,
    type: 'directory',
    skeleton: lines.join('\n'),
    files,
    skipped,
    missing_grammars: [...missing].map(([pkg, n]) => ({
      package: pkg,
      files: n,
      install: `npm install --save-optional ${pkg}`,
    })),
    truncated,
  }
}

async function readBelow(dir: FileHandle, real: string, abs: string): Promise<string | { reason: string }> {
  const rel = abs.slice(real === sep ? 1 : real.length + 1)
  let fd: number
  try {
    fd = openAt2(dir.fd, rel, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK, STRICT)
  } catch {
    return { reason: 'not readable beneath the directory' }
  }
  try {
    const st = await statFd(fd)
    if (!st.isFile()) return { reason: 'not a regular file' }
    if (st.size > INDEX_MAX_FILE_BYTES)
      return { reason: `${st.size} bytes, over the ${INDEX_MAX_FILE_BYTES}-byte limit` }
    // The sandbox may grow the file after the fstat: the read itself is bounded.
    const { data: buf, over } = await readCapped(fd, INDEX_MAX_FILE_BYTES)
    if (over) return { reason: `over the ${INDEX_MAX_FILE_BYTES}-byte limit` }
    const type = sniffBinary(buf.subarray(0, SNIFF_BYTES))
    if (type) return { reason: `binary (${type})` }
    return buf.toString('utf8')
  } finally {
    await closeFd(fd)
  }
}

export { Args as IndexArgsSchema }
