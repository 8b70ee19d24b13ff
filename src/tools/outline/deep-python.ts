// tree-sitter-python's scanner keeps its indentation stack in the parser's 1 KiB serialization
// buffer, two bytes a level: past ~500 levels the stack is cut, and the whole file parses as one
// ERROR node, so the index lost every OUTER definition of a deeply nested file. CPython itself
// refuses more than 100 levels ("too many levels of indentation"), so lines nested deeper are no
// Python anything runs: before parsing they are replaced by `...` at the first level past the cap
// (one line for one line, so rows and anchors stay), their definitions are not listed, and the
// index says which lines it did not read.
export const MAX_PYTHON_LEVELS = 100

export type Elided = { first: number; last: number; lines: number }

// Python's own rule for a line's indentation: a tab advances to the next multiple of 8.
function indentOf(line: string): { col: number; end: number } {
  let col = 0
  let i = 0
  for (; i < line.length; i++) {
    const c = line[i]
    if (c === ' ') col++
    else if (c === '\t') col = (Math.floor(col / 8) + 1) * 8
    else if (c === '\f') col = 0
    else break
  }
  return { col, end: i }
}

export function elideDeepPython(text: string): { text: string; elided?: Elided } {
  const lines = text.split('\n')
  // Indentation columns of the open levels; stack[0] is the module's.
  const stack = [0]
  let first = 0
  let last = 0
  let count = 0
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const { col, end } = indentOf(line)
    const rest = line.slice(end)
    const deep = stack.length - 1 > MAX_PYTHON_LEVELS
    // Blank and comment-only lines open or close nothing (as in Python's tokenizer).
    if (rest === '' || rest === '\r' || rest.startsWith('#')) {
      if (deep && col > stack[MAX_PYTHON_LEVELS]!) lines[i] = rest.endsWith('\r') ? '\r' : ''
      continue
    }
    while (stack.length > 1 && stack[stack.length - 1]! > col) stack.pop()
    if (col > stack[stack.length - 1]!) stack.push(col)
    if (stack.length - 1 <= MAX_PYTHON_LEVELS) continue
    lines[i] = `${' '.repeat(stack[MAX_PYTHON_LEVELS + 1]!)}...${line.endsWith('\r') ? '\r' : ''}`
    if (count === 0) first = i + 1
    last = i + 1
    count++
  }
  if (count === 0) return { text }
  return { text: lines.join('\n'), elided: { first, last, lines: count } }
}

export function elidedNote(e: Elided): string {
  return `# lines ${e.first}..${e.last} (${e.lines} lines) nest deeper than ${MAX_PYTHON_LEVELS} levels, which Python refuses: not indexed`
}
