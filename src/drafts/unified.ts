// A unified diff of two texts: Myers' O((N+M)D) shortest edit script, then hunks with
// three lines of context, as `diff -u` and git print them.
//
// Myers keeps one frontier per edit step for the walk back, so its memory grows with D²
// and its time with (N+M)·D: a sandbox that rewrites a few thousand lines would make the
// host spend gigabytes on one diff. Past MAX_EDITS steps (or MAX_WORK comparisons) the
// search stops and the file is shown as a whole replacement (every old line removed, every
// new one added): still a correct diff that patch and `git apply` accept, only not minimal.
const MAX_EDITS = 2000
const MAX_WORK = 20_000_000

type Op = { kind: ' ' | '-' | '+'; line: string }

// Lines without their terminators; `noEol` says the text does not end in a newline.
function splitText(text: string): { lines: string[]; noEol: boolean } {
  if (text === '') return { lines: [], noEol: false }
  const lines = text.split('\n')
  const noEol = lines[lines.length - 1] !== ''
  if (!noEol) lines.pop()
  return { lines, noEol }
}

function wholeReplacement(a: string[], b: string[]): Op[] {
  return [...a.map((line): Op => ({ kind: '-', line })), ...b.map((line): Op => ({ kind: '+', line }))]
}

function editScript(a: string[], b: string[]): Op[] {
  const n = a.length
  const m = b.length
  const max = n + m
  const offset = max + 1
  const v = new Int32Array(2 * max + 3)
  // trace[d] holds only the diagonals -d..d the walk back reads (from frontier d), so the
  // whole trace is O(D²) integers, and D is capped.
  const trace: Int32Array[] = []
  let work = 0
  let found = false
  for (let d = 0; d <= max && !found; d++) {
    if (d > MAX_EDITS || work > MAX_WORK) return wholeReplacement(a, b)
    trace.push(v.slice(offset - d, offset + d + 1))
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!)
          ? v[offset + k + 1]!
          : v[offset + k - 1]! + 1
      let y = x - k
      work++
      while (x < n && y < m && a[x] === b[y]) {
        x++
        y++
        work++
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
    // trace[d] is indexed from diagonal -d.
    const vd = trace[d]!
    const k = x - y
    const pk = k === -d || (k !== d && vd[d + k - 1]! < vd[d + k + 1]!) ? k + 1 : k - 1
    const px = d === 0 ? 0 : vd[d + pk]!
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
