import { VisError } from '../../util/errors.js'
import type { Pacer } from '../../util/pacer.js'

// Two glob dialects share one matcher here.
//
// grep's `include`: `*` and `?` stay within one path component, `**` crosses them, `[...]` is a
// class, `{a,b}` a choice. A glob without `/` matches the file name at any depth; one with `/`
// matches the path relative to the workspace.
//
// .gitignore rules (gitignore.ts): the same, but `**` is special only as a whole path component
// (elsewhere it is `*`), `{` is an ordinary character and `\` escapes the next one.
//
// Both the patterns and the paths they meet come from the sandbox, so matching never
// backtracks: a pattern becomes a small automaton simulated one path character at a time over
// the set of live states, O(pattern × path) in the worst case (a backtracking regex is
// exponential in the number of `**`, polynomial of high degree in the number of `*`).

// Longer globs are refused: the cost is linear in the glob, but nobody needs one this long.
export const GLOB_MAX_LENGTH = 1024
// An include list is bounded as a whole, as each glob is: every glob runs against every path
// grep meets, so the list's total size is what the host pays per path.
export const INCLUDE_MAX_GLOBS = 64
export const INCLUDE_MAX_TOTAL = 2048

export type Dialect = 'include' | 'gitignore'

// How one automaton state tests a character (a UTF-16 unit, as the regex this replaced read them).
const LITERAL = 0
const NOT_SLASH = 1
const ANY = 2
const CLASS = 3
const SLASH = 0x2f

type Test = { kind: typeof LITERAL; code: number } | { kind: typeof NOT_SLASH | typeof ANY } | ClassTest
type ClassTest = { kind: typeof CLASS; test: (c: string) => boolean }

type Node = { kind: 'char'; test: Test; next: number } | { kind: 'split'; next: number[] } | { kind: 'match' }

type Token =
  | { kind: 'char'; test: Test }
  | { kind: 'star' }
  | { kind: 'globstar' }
  | { kind: 'dirs' }
  | { kind: 'choice'; alts: Token[][] }

const literal = (c: string): Test => ({ kind: LITERAL, code: c.charCodeAt(0) })

export class GlobError extends Error {}

function classTest(body: string): ClassTest {
  // One character against one class: a regex is linear here.
  let src = body.replace(/\\/g, '\\\\')
  if (src.startsWith('!')) src = `^${src.slice(1)}`
  const re = new RegExp(`^[${src}]$`)
  return { kind: CLASS, test: (c) => re.test(c) }
}

function parse(glob: string, dialect: Dialect): Token[] {
  const git = dialect === 'gitignore'
  let i = 0
  // In .gitignore, `**` counts only between slashes (or the pattern's ends).
  const wholeComponent = (from: number) =>
    (from === 0 || glob[from - 1] === '/') && (from + 2 === glob.length || glob[from + 2] === '/')
  const seq = (inChoice: boolean): Token[] => {
    const out: Token[] = []
    while (i < glob.length) {
      const c = glob[i]!
      if (inChoice && (c === ',' || c === '}')) return out
      i++
      if (c === '*') {
        if (glob[i] === '*' && (!git || wholeComponent(i - 1))) {
          i++
          if (glob[i] === '/') {
            i++
            out.push({ kind: 'dirs' })
          } else out.push({ kind: 'globstar' })
        } else {
          while (git && glob[i] === '*') i++
          out.push({ kind: 'star' })
        }
      } else if (c === '?') out.push({ kind: 'char', test: { kind: NOT_SLASH } })
      else if (git && c === '\\' && i < glob.length) out.push({ kind: 'char', test: literal(glob[i++]!) })
      else if (c === '[') {
        const close = glob.indexOf(']', i + 1)
        if (close < 0) out.push({ kind: 'char', test: literal('[') })
        else {
          try {
            out.push({ kind: 'char', test: classTest(glob.slice(i, close)) })
          } catch {
            throw new GlobError(`has a character class that is not valid ('${glob.slice(i - 1, close + 1)}')`)
          }
          i = close + 1
        }
      } else if (c === '{' && !git) {
        const alts: Token[][] = [seq(true)]
        while (glob[i] === ',') {
          i++
          alts.push(seq(true))
        }
        if (glob[i] !== '}') throw new GlobError("has a '{' without its closing '}'")
        i++
        out.push({ kind: 'choice', alts })
      } else out.push({ kind: 'char', test: literal(c) })
    }
    return out
  }
  return seq(false)
}

// Builds the automaton back to front: each token is compiled with the state
// that follows it already known.
function compile(tokens: Token[]): { nodes: Node[]; start: number } {
  const nodes: Node[] = [{ kind: 'match' }]
  const add = (n: Node) => nodes.push(n) - 1
  const build = (seq: Token[], next: number): number => {
    let cur = next
    for (let k = seq.length - 1; k >= 0; k--) {
      const t = seq[k]!
      if (t.kind === 'char') cur = add({ kind: 'char', test: t.test, next: cur })
      else if (t.kind === 'star' || t.kind === 'globstar') {
        const loop = add({ kind: 'split', next: [] })
        const step = add({ kind: 'char', test: { kind: t.kind === 'star' ? NOT_SLASH : ANY }, next: loop })
        ;(nodes[loop] as { next: number[] }).next.push(step, cur)
        cur = loop
      } else if (t.kind === 'dirs') {
        // `**/`: nothing, or any run of characters ending in '/'.
        const slash = add({ kind: 'char', test: literal('/'), next: cur })
        const loop = add({ kind: 'split', next: [] })
        const step = add({ kind: 'char', test: { kind: ANY }, next: loop })
        ;(nodes[loop] as { next: number[] }).next.push(step, slash)
        cur = add({ kind: 'split', next: [cur, loop] })
      } else {
        const after = cur
        cur = add({ kind: 'split', next: t.alts.map((a) => build(a, after)) })
      }
    }
    return cur
  }
  return { nodes, start: build(tokens, 0) }
}

// A compiled pattern. `size` (its number of states) times a text's length bounds the work of
// one test, so callers that meet many paths can charge a Pacer with it.
export interface Glob {
  test(text: string): boolean
  // The same test, letting the event loop run (through the Pacer) every PACED_CHARS characters.
  testPaced(text: string, pace: Pacer): Promise<boolean>
  size: number
}
const PACED_CHARS = 64

export function compilePattern(glob: string, dialect: Dialect): Glob {
  const { nodes, start } = compile(parse(glob, dialect))
  const n = nodes.length
  // Flat, monomorphic tables of the character states, and for every state the character
  // (or match) states it reaches without reading one, worked out once.
  const kind = new Int8Array(n).fill(-1)
  const code = new Int32Array(n)
  const nextOf = new Int32Array(n)
  const classes: (ClassTest | undefined)[] = new Array(n)
  const MATCH = 9
  for (let s = 0; s < n; s++) {
    const node = nodes[s]!
    if (node.kind === 'match') kind[s] = MATCH
    else if (node.kind === 'char') {
      kind[s] = node.test.kind
      nextOf[s] = node.next
      if (node.test.kind === LITERAL) code[s] = node.test.code
      else if (node.test.kind === CLASS) classes[s] = node.test
    }
  }
  const closures: Int32Array[] = new Array(n)
  const closure = (from: number): Int32Array => {
    const known = closures[from]
    if (known) return known
    const out: number[] = []
    const stack = [from]
    const seen = new Set<number>()
    while (stack.length) {
      const s = stack.pop()!
      if (seen.has(s)) continue
      seen.add(s)
      const node = nodes[s]!
      if (node.kind === 'split') for (let j = node.next.length - 1; j >= 0; j--) stack.push(node.next[j]!)
      else out.push(s)
    }
    const c = Int32Array.from(out)
    closures[from] = c
    return c
  }
  // One test's state: the live states and the next ones (swapped after each character, so a
  // test allocates nothing per character), and which states the current character reached.
  const begin = () => {
    const run = {
      live: new Int32Array(n),
      next: new Int32Array(n),
      mark: new Int32Array(n).fill(-1),
      len: 0,
      at: 0,
    }
    for (const t of closure(start)) {
      run.mark[t] = 0
      run.live[run.len++] = t
    }
    return run
  }
  type Run = ReturnType<typeof begin>
  // Reads text[run.at, until); the work is about run.len states per character.
  const advance = (run: Run, text: string, until: number) => {
    let { live, next, len } = run
    const mark = run.mark
    for (let k = run.at; k < until && len > 0; k++) {
      const c = text.charCodeAt(k)
      const gen = k + 1
      let nextLen = 0
      for (let j = 0; j < len; j++) {
        const s = live[j]!
        const kd = kind[s]!
        const ok =
          kd === LITERAL
            ? code[s] === c
            : kd === NOT_SLASH
              ? c !== SLASH
              : kd === ANY || (kd === CLASS && classes[s]!.test(text[k]!))
        if (!ok) continue
        for (const t of closure(nextOf[s]!)) {
          if (mark[t] === gen) continue
          mark[t] = gen
          next[nextLen++] = t
        }
      }
      const swap = live
      live = next
      next = swap
      len = nextLen
    }
    run.live = live
    run.next = next
    run.len = len
    run.at = until
  }
  const matched = (run: Run) => {
    for (let j = 0; j < run.len; j++) if (kind[run.live[j]!] === MATCH) return true
    return false
  }
  return {
    size: n,
    test(text) {
      const run = begin()
      advance(run, text, text.length)
      return matched(run)
    },
    async testPaced(text, pace) {
      const run = begin()
      while (run.at < text.length && run.len > 0) {
        const before = run.len
        advance(run, text, Math.min(text.length, run.at + PACED_CHARS))
        await pace.charge(before * PACED_CHARS)
      }
      return run.len > 0 && matched(run)
    },
  }
}

function bad(glob: string, why: string): VisError {
  return new VisError('tool.bad-glob', `grep: include glob '${glob.slice(0, 80)}' ${why}`, {
    op: 'grep',
  })
}

function includeGlob(glob: string): Glob {
  if (glob.length > GLOB_MAX_LENGTH)
    throw bad(glob, `is ${glob.length} characters long; the limit is ${GLOB_MAX_LENGTH}`)
  try {
    return compilePattern(glob, 'include')
  } catch (err) {
    if (err instanceof GlobError) throw bad(glob, err.message)
    throw err
  }
}

export function compileGlob(glob: string): (text: string) => boolean {
  const g = includeGlob(glob)
  return (text) => g.test(text)
}

// grep's include list as one test; `paced` is the same test letting the event loop run.
export interface PathMatcher {
  (relPath: string): boolean
  paced(relPath: string, pace: Pacer): Promise<boolean>
}

export function globMatcher(globs: readonly string[]): PathMatcher {
  if (globs.length === 0) return Object.assign(() => true, { paced: async () => true })
  const total = globs.reduce((sum, g) => sum + g.length, 0)
  if (globs.length > INCLUDE_MAX_GLOBS || total > INCLUDE_MAX_TOTAL) {
    throw new VisError(
      'tool.bad-glob',
      `grep: include lists ${globs.length} globs of ${total} characters in all; the limits are ${INCLUDE_MAX_GLOBS} globs and ${INCLUDE_MAX_TOTAL} characters (every glob runs against every path): merge them with {a,b} or grep a narrower path`,
      { op: 'grep', globs: globs.length, characters: total },
    )
  }
  const tests = globs.map((g) => ({ glob: includeGlob(g.replace(/^\.\//, '')), byName: !g.includes('/') }))
  const subject = (t: { byName: boolean }, p: string) => (t.byName ? p.slice(p.lastIndexOf('/') + 1) : p)
  return Object.assign((p: string) => tests.some((t) => t.glob.test(subject(t, p))), {
    async paced(p: string, pace: Pacer) {
      for (const t of tests) if (await t.glob.testPaced(subject(t, p), pace)) return true
      return false
    },
  })
}
