// The part of web-tree-sitter's API the index uses. web-tree-sitter is an optional dependency,
// loaded at run time (grammars.ts), so the index's types do not depend on it being installed.

export interface Point {
  row: number
  column: number
}

export interface SyntaxNode {
  type: string
  text: string
  startIndex: number
  endIndex: number
  startPosition: Point
  endPosition: Point
  parent: SyntaxNode | null
  namedChildren: (SyntaxNode | null)[]
  previousNamedSibling: SyntaxNode | null
  childForFieldName(name: string): SyntaxNode | null
}

export interface SyntaxTree {
  rootNode: SyntaxNode
  delete(): void
}

export interface TreeParser {
  setLanguage(language: unknown): unknown
  parse(
    input: string,
    oldTree?: null,
    options?: { progressCallback?: (state: { currentOffset: number }) => boolean | undefined },
  ): SyntaxTree | null
  reset(): void
}
