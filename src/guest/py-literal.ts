import { boundaryView } from './boundary-view.js'
import { pyNumber, pyString } from './py-string.js'

const WIDTH = 100
const INDENT = '    '

// One-line Python literal of boundary-checked data.
function flat(v: unknown): string {
  if (v === null) return 'None'
  if (v === true) return 'True'
  if (v === false) return 'False'
  if (typeof v === 'number') return pyNumber(v)
  if (typeof v === 'string') return pyString(v)
  if (Array.isArray(v)) return `[${v.map(flat).join(', ')}]`
  const entries = Object.entries(v as Record<string, unknown>)
  return `{${entries.map(([k, x]) => `${pyString(k)}: ${flat(x)}`).join(', ')}}`
}

// A Python expression that evaluates to the data: JSON data as Python literals, on one line.
export function pyJsonLiteral(value: unknown): string {
  return flat(boundaryView(value, 'pyJsonLiteral'))
}

// A deterministic, readable Python literal of a context: insertion order; a container stays
// on one line when it fits in 100 columns at its indent, otherwise one item per line.
export function ctxToPythonStr(value: unknown): string {
  const data = boundaryView(value, 'ctxToPythonStr')
  const render = (v: unknown, indent: string, lead: number): string => {
    const one = flat(v)
    if (v === null || typeof v !== 'object' || indent.length + lead + one.length <= WIDTH) return one
    const inner = indent + INDENT
    if (Array.isArray(v)) {
      if (v.length === 0) return '[]'
      return `[\n${v.map((x) => `${inner}${render(x, inner, 1)},`).join('\n')}\n${indent}]`
    }
    const entries = Object.entries(v as Record<string, unknown>)
    if (entries.length === 0) return '{}'
    const lines = entries.map(([k, x]) => {
      const key = `${pyString(k)}: `
      return `${inner}${key}${render(x, inner, key.length + 1)},`
    })
    return `{\n${lines.join('\n')}\n${indent}}`
  }
  return render(data, '', 0)
}
