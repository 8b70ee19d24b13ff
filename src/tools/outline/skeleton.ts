import { ownValue } from '../../util/own-key.js'
import { anchorOf } from '../fs/lines.js'
import { declaratorNameNode, kindOf, type LanguageSpec } from './languages.js'
import type { SyntaxNode } from './syntax-node.js'

// One definition of a file: its lines are `from`..`to`, the anchors `cat` prints for them, so
// patch({path, from_anchor: from, to_anchor: to, replace}) replaces it whole.
export interface Definition {
  kind: string
  name: string
  signature: string
  depth: number
  start: number
  end: number
  from: string
  to: string
}

export interface SkeletonLimits {
  // Nesting shown: 0 lists top-level definitions only.
  maxDepth: number
  maxDefs: number
  // Syntax nodes looked at, so a huge literal cannot keep the host busy.
  maxNodes: number
}

const SIGNATURE_MAX = 160

// The last line a node covers: a node that ends at a line's first column ends on the line
// before (its text ends with the newline).
function lastRow(n: SyntaxNode): number {
  const { row, column } = n.endPosition
  return column === 0 && row > n.startPosition.row ? row - 1 : row
}

// The node whose lines belong to the definition: climbed through the wrappers that hold only
// it (a decorated function, `export class`, `template<...>`), and back over leading siblings.
function extent(node: SyntaxNode, lang: LanguageSpec): { first: number; last: number } {
  let outer = node
  for (;;) {
    const p = outer.parent
    if (!p || !lang.wrappers?.includes(p.type)) break
    const type = outer.type
    if (p.namedChildren.filter((c) => c?.type === type).length !== 1) break
    outer = p
  }
  let first = outer.startPosition.row
  for (let s = outer.previousNamedSibling; s && lang.leading?.includes(s.type); s = s.previousNamedSibling) {
    if (lastRow(s) < first - 1) break
    first = s.startPosition.row
  }
  return { first, last: lastRow(outer) }
}

// What follows the name up to the body: parameters, return type, bases. One line, bounded.
function signatureOf(node: SyntaxNode, name: string, kind: string): string {
  const body = node.childForFieldName('body') ?? node.childForFieldName('value')?.childForFieldName('body')
  const text = node.text
  let header =
    body && body.startIndex > node.startIndex ? text.slice(0, body.startIndex - node.startIndex) : text
  if (!body) header = header.split('\n')[0]!
  const nameNode = node.childForFieldName('name') ?? declaratorNameNode(node)
  let after: string
  if (nameNode && nameNode.startIndex >= node.startIndex)
    after = header.slice(nameNode.endIndex - node.startIndex)
  else {
    const at = header.indexOf(name)
    after = at >= 0 ? header.slice(at + name.length) : ''
  }
  let sig = after.replace(/\s+/g, ' ').trim()
  sig = sig
    .replace(/^=\s*/, '')
    // Ruby's one-line `def b; end`: what follows the `;` is the body.
    .replace(/^;.*$/, '')
    .replace(/\s*(=>|[{:;=])$/, '')
    .trim()
  // Go's `Server struct {` says its kind twice.
  if (sig === kind) return ''
  return sig.length > SIGNATURE_MAX ? `${sig.slice(0, SIGNATURE_MAX - 1)}…` : sig
}

function match(
  node: SyntaxNode,
  lang: LanguageSpec,
): { kind: string; name: string; descend: boolean } | undefined {
  // Own keys only: a node type spelled like an Object member is no definition rule.
  const rule = ownValue(lang.defs, node.type)
  if (!rule || (rule.when && !rule.when(node))) return undefined
  const name = rule.name ? rule.name(node) : node.childForFieldName('name')?.text
  if (!name) return undefined
  return { kind: kindOf(rule, node), name: name.replace(/\s+/g, ' '), descend: rule.descend ?? false }
}

// The definitions of a parsed file in source order, nested by depth. Walked with an explicit
// stack: a deeply nested file must not exhaust the host's call stack.
export function definitions(
  root: SyntaxNode,
  lang: LanguageSpec,
  lines: readonly string[],
  limits: SkeletonLimits,
): { defs: Definition[]; truncated: boolean } {
  const defs: Definition[] = []
  const stack: { node: SyntaxNode; depth: number }[] = [{ node: root, depth: 0 }]
  let visited = 0
  while (stack.length > 0) {
    if (++visited > limits.maxNodes) return { defs, truncated: true }
    const { node, depth } = stack.pop()!
    const m = node === root ? undefined : match(node, lang)
    let childDepth = depth
    if (m) {
      if (defs.length >= limits.maxDefs) return { defs, truncated: true }
      const { first, last } = extent(node, lang)
      const start = first + 1
      const end = Math.min(last + 1, lines.length)
      defs.push({
        kind: m.kind,
        name: m.name,
        signature: signatureOf(node, m.name, m.kind),
        depth,
        start,
        end,
        from: anchorOf(start, lines[start - 1] ?? ''),
        to: anchorOf(end, lines[end - 1] ?? ''),
      })
      if (!m.descend || depth >= limits.maxDepth) continue
      childDepth = depth + 1
    }
    const kids = node.namedChildren
    for (let i = kids.length - 1; i >= 0; i--) {
      const k = kids[i]
      if (k) stack.push({ node: k, depth: childDepth })
    }
  }
  return { defs, truncated: false }
}

// `<kind> <name>  <signature>  @<first anchor>..<last anchor>`, two spaces of indent a level.
export function renderDefinition(d: Definition): string {
  const head = `${'  '.repeat(d.depth)}${d.kind} ${d.name}`
  return `${head}${d.signature ? `  ${d.signature}` : ''}  @${d.from}..${d.to}`
}
