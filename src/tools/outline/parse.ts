import { VisError } from '../../util/errors.js'
import { splitLines } from '../fs/lines.js'
import { type Elided, elideDeepPython } from './deep-python.js'
import { parserFor } from './grammars.js'
import type { LanguageSpec } from './languages.js'
import { type Definition, definitions, type SkeletonLimits } from './skeleton.js'

// The index parses on the host, in its event loop: each parse is bounded in bytes (the
// caller's check) and in time, through the parser's progress callback.
export interface Outline {
  defs: Definition[]
  totalLines: number
  truncated: boolean
  // Time spent parsing and walking, without loading the grammar.
  parseMs: number
  // Lines nested too deep to parse, not read (deep-python.ts).
  elided?: Elided
}

export class ParseTimeout extends Error {}

export async function outline(
  lang: LanguageSpec,
  text: string,
  timeoutMs: number,
  limits: SkeletonLimits,
  op: string,
  path: string,
  onStart?: () => void,
): Promise<Outline> {
  const parser = await parserFor(lang, op, path)
  // The clock starts once the grammar is loaded: the first call's load is not the file's cost.
  onStart?.()
  const started = Date.now()
  const deadline = started + timeoutMs
  const prepared = lang.id === 'python' ? elideDeepPython(text) : { text }
  const tree = parser.parse(prepared.text, null, { progressCallback: () => Date.now() >= deadline })
  if (!tree) {
    // A cancelled parse resumes where it stopped unless reset; the next file is another text.
    parser.reset()
    throw new ParseTimeout(path)
  }
  try {
    // Anchors are the file's own lines, elided or not.
    const { lines } = splitLines(text)
    const r = definitions(tree.rootNode, lang, lines, limits)
    return {
      defs: r.defs,
      totalLines: lines.length,
      truncated: r.truncated,
      parseMs: Date.now() - started,
      ...(prepared.elided ? { elided: prepared.elided } : {}),
    }
  } finally {
    tree.delete()
  }
}

export function timeoutError(op: string, path: string, ms: number): VisError {
  return new VisError(
    'tool.index-timeout',
    `${op}: parsing '${path}' took longer than ${ms} ms and was stopped; use grep to find the definitions you need, or cat a part of the file`,
    { op, path, timeout_ms: ms },
  )
}
