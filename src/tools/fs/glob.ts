import { VisError } from '../../util/errors.js'

// A small glob dialect for grep's `include`: `*` and `?` stay within one
// path component, `**` crosses them, `[...]` is a class, `{a,b}` a choice.
// A glob without `/` matches the file name at any depth; one with `/`
// matches the path relative to the workspace.
//
// Both the glob and the paths it meets come from the sandbox, so matching
// never backtracks: the glob becomes a small automaton simulated one path
// character at a time over the set of live states, O(glob × path) in the
// worst case (a backtracking regex is exponential in the number of `**`).

// Longer globs are refused: the cost is linear in the glob, but nobody
// needs an include glob this long.
export const GLOB_MAX_LENGTH = 1024

type Node =
  | { kind: 'char'; test: (c: string) => boolean; next: number }
  | { kind: 'split'; next: number[] }
  | { kind: 'match' }

type Token =
  | { kind: 'char'; test: (c: string) => boolean }
  | { kind: 'star' }
  | { kind: 'globstar' }
  | { kind: 'dirs' }
  | { kind: 'choice'; alts: Token[][] }

const notSlash = (c: string) => c !== '/'
const any = () => true

function bad(glob: string, why: string): VisError {
  return new VisError('tool.bad-glob', `grep: include glob '${glob.slice(0, 80)}' ${why}`, {
    op: 'grep',
  })
}

function classTest(body: string): (c: string) => boolean {
  // One character against one class: a regex is linear here.
  let src = body.replace(/\\/g, '\\\\')
  if (src.startsWith('!')) src = `^${src.slice(1)}`
  const re = new RegExp(`^[${src}]$`)
  return (c) => re.test(c)
}

function parse(glob: string): Token[] {
  let i = 0
  const seq = (inChoice: boolean): Token[] => {
    const out: Token[] = []
    while (i < glob.length) {
      const c = glob[i]!
      if (inChoice && (c === ',' || c === '}')) return out
      i++
      if (c === '*') {
        if (glob[i] === '*') {
          i++
          if (glob[i] === '/') {
            i++
            out.push({ kind: 'dirs' })
          } else out.push({ kind: 'globstar' })
        } else out.push({ kind: 'star' })
      } else if (c === '?') out.push({ kind: 'char', test: notSlash })
      else if (c === '[') {
        const close = glob.indexOf(']', i + 1)
        if (close < 0) out.push({ kind: 'char', test: (x) => x === '[' })
        else {
          try {
            out.push({ kind: 'char', test: classTest(glob.slice(i, close)) })
          } catch {
            throw bad(glob, `has a character class that is not valid ('${glob.slice(i - 1, close + 1)}')`)
          }
          i = close + 1
        }
      } else if (c === '{') {
        const alts: Token[][] = [seq(true)]
        while (glob[i] === ',') {
          i++
          alts.push(seq(true))
        }
        if (glob[i] !== '}') throw bad(glob, "has a '{' without its closing '}'")
        i++
        out.push({ kind: 'choice', alts })
      } else out.push({ kind: 'char', test: (x) => x === c })
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
        const step = add({ kind: 'char', test: t.kind === 'star' ? notSlash : any, next: loop })
        ;(nodes[loop] as { next: number[] }).next.push(step, cur)
        cur = loop
      } else if (t.kind === 'dirs') {
        // `**/`: nothing, or any run of characters ending in '/'.
        const slash = add({ kind: 'char', test: (x) => x === '/', next: cur })
        const loop = add({ kind: 'split', next: [] })
        const step = add({ kind: 'char', test: any, next: loop })
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

export function compileGlob(glob: string): (text: string) => boolean {
  if (glob.length > GLOB_MAX_LENGTH)
    throw bad(glob, `is ${glob.length} characters long; the limit is ${GLOB_MAX_LENGTH}`)
  const { nodes, start } = compile(parse(glob))
  const mark = new Int32Array(nodes.length).fill(-1)
  // Adds a state and everything reachable from it without reading a character.
  const close = (from: number, into: number[], gen: number) => {
    const stack = [from]
    while (stack.length) {
      const s = stack.pop()!
      if (mark[s] === gen) continue
      mark[s] = gen
      const n = nodes[s]!
      if (n.kind === 'split') for (let j = n.next.length - 1; j >= 0; j--) stack.push(n.next[j]!)
      else into.push(s)
    }
  }
  return (text) => {
    let gen = 0
    mark.fill(-1)
    let live: number[] = []
    close(start, live, gen)
    // UTF-16 units, as the regex this replaced read them.
    for (let k = 0; k < text.length; k++) {
      const c = text[k]!
      if (live.length === 0) return false
      gen++
      const next: number[] = []
      for (const s of live) {
        const n = nodes[s]!
        if (n.kind === 'char' && n.test(c)) close(n.next, next, gen)
      }
      live = next
    }
    return live.some((s) => nodes[s]!.kind === 'match')
  }
}

export function globMatcher(globs: readonly string[]): (relPath: string) => boolean {
  if (globs.length === 0) return () => true
  const tests = globs.map((g) => {
    const match = compileGlob(g.replace(/^\.\//, ''))
    return g.includes('/') ? match : (p: string) => match(p.slice(p.lastIndexOf('/') + 1))
  })
  return (p) => tests.some((t) => t(p))
}
