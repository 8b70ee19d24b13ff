import { VisError } from '../util/errors.js'

const KEYWORDS = new Set(
  'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield'.split(
    ' ',
  ),
)

// A host symbol as a Python name: `git/status` → git_status, `commit!` → commit,
// `file-exists?` → is_file_exists. Separators and other punctuation become one `_`;
// a leading digit gets `_`; a keyword gets a trailing `_`.
export function symToPyName(sym: string): string {
  let s = sym.trim()
  let predicate = false
  while (s.endsWith('!') || s.endsWith('?')) {
    if (s.endsWith('?')) predicate = true
    s = s.slice(0, -1)
  }
  s = s.replace(/[^A-Za-z0-9_]+/g, '_').replace(/^_+(?=[A-Za-z0-9])/, (m) => (sym.startsWith('_') ? m : ''))
  s = s.replace(/_+$/, '')
  if (s === '')
    throw new VisError('guest.bad-symbol', `${JSON.stringify(sym)} has no characters a Python name can use`)
  if (predicate && !s.startsWith('is_')) s = `is_${s}`
  if (/^[0-9]/.test(s)) s = `_${s}`
  if (KEYWORDS.has(s)) s = `${s}_`
  return s
}
