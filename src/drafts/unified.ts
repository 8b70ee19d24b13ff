// A unified diff of two texts: Myers' O((N+M)D) shortest edit script, then hunks with
// three lines of context, as `diff -u` and git print them.

type Op = { kind: ' ' | '-' | '+'; line: string }

// Lines without their terminators; `noEol` says the text does not end in a newline.
function splitText(text: string): { lines: string[]; noEol: boolean } {
  if (text === '') return { lines: [], noEol: false }
  const lines = text.split('\n')
  const noEol = lines[lines.length - 1] !== ''
  if (!noEol) lines.pop()
  return { lines, noEol }
}

function editScript(a: string[], b: string[]): Op[] {
  const n = a.length
  const m = b.length
  const max = n + m
  const offset = max + 1
  const v = new Int32Array(2 * max + 3)
  const trace: Int32Array[] = []
  let found = false
  for (let d = 0; d <= max && !found; d++) {
    trace.push(v.slice())
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!)
          ? v[offset + k + 1]!
          : v[offset + k - 1]! + 1
      let y = x - k
      while (x < n && y < m && a[x] === b[y]) {
        x++
        y++
      }
      v[offset + k] = x
      if (x >= n && y >= m) {
        found = true
        break
      }
    }
  }
  // Walk back from (n, m): trace[d] is the frontier before round d.
  const ops: Op[] = []
  let x = n
  let y = m
  for (let d = trace.length - 1; d >= 0; d--) {
    const vd = trace[d]!
    const k = x - y
    const pk = k === -d || (k !== d && vd[offset + k - 1]! < vd[offset + k + 1]!) ? k + 1 : k - 1
    const px = vd[offset + pk]!
    const py = px - pk
    while (x > px && y > py) {
      ops.push({ kind: ' ', line: a[x - 1]! })
      x--
      y--
    }
    if (d > 0) {
      if (x === px) ops.push({ kind: '+', line: b[py]! })
      else ops.push({ kind: '-', line: a[px]! })
    }
    x = px
    y = py
  }
  return ops.reverse()
}

const CONTEXT = 3

// The hunks (from the first `@@`), or '' when the texts are equal.
export function unifiedHunks(oldText: string, newText: string): string {
  if (oldText === newText) return ''
  const a = splitText(oldText)
  const b = splitText(newText)
  // A missing final newline makes the last line differ, as in diff(1).
  const al = a.lines.map((l, i) => (a.noEol && i === a.lines.length - 1 ? `${l}\u0000` : l))
  const bl = b.lines.map((l, i) => (b.noEol && i === b.lines.length - 1 ? `${l}\u0000` : l))
  const ops = editScript(al, bl)
  const out: string[] = []
  let i = 0
  let oldLine = 1
  let newLine = 1
  // Positions (old, new line numbers) before each op.
  const pos: { o: number; n: number }[] = []
  for (const op of ops) {
    pos.push({ o: oldLine, n: newLine })
    if (op.kind !== '+') oldLine++
    if (op.kind !== '-') newLine++
  }
  while (i < ops.length) {
    if (ops[i]!.kind === ' ') {
      i++
      continue
    }
    let start = Math.max(0, i - CONTEXT)
    let end = i
    // Extend while the next change is within 2*CONTEXT lines of equal text.
    for (;;) {
      while (end < ops.length && ops[end]!.kind !== ' ') end++
      let eq = end
      while (eq < ops.length && ops[eq]!.kind === ' ') eq++
      if (eq < ops.length && eq - end <= 2 * CONTEXT) end = eq
      else {
        end = Math.min(ops.length, end + CONTEXT)
        break
      }
    }
    const slice = ops.slice(start, end)
    const oCount = slice.filter((o) => o.kind !== '+').length
    const nCount = slice.filter((o) => o.kind !== '-').length
    const oStart = oCount === 0 ? pos[start]!.o - 1 : pos[start]!.o
    const nStart = nCount === 0 ? pos[start]!.n - 1 : pos[start]!.n
    out.push(
      `@@ -${oStart}${oCount === 1 ? '' : `,${oCount}`} +${nStart}${nCount === 1 ? '' : `,${nCount}`} @@`,
    )
    for (const op of slice) {
      if (op.line.endsWith('\u0000'))
        out.push(`${op.kind}${op.line.slice(0, -1)}`, '\\ No newline at end of file')
      else out.push(`${op.kind}${op.line}`)
    }
    i = end
    start = end
  }
  return `${out.join('\n')}\n`
}
