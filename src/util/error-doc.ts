import { ERROR_CATALOGUE, ERROR_CODES, ERROR_FAMILIES, type ErrorCatalogueEntry } from './error-catalogue.js'

// docs/errors.md, written from the catalogue (`npm run docs:errors`); a test fails when the file
// in the tree is not what this returns, so the page never drifts from the codes.
export function renderErrorsDoc(): string {
  const groups = new Map<string, [string, ErrorCatalogueEntry][]>()
  const add = (code: string, entry: ErrorCatalogueEntry) => {
    const prefix = code.slice(0, code.indexOf('.'))
    groups.set(prefix, [...(groups.get(prefix) ?? []), [code, entry]])
  }
  for (const code of ERROR_CODES) add(code, ERROR_CATALOGUE[code])
  for (const [code, entry] of Object.entries(ERROR_FAMILIES)) add(code, entry)
  const cell = (s: string) => s.replaceAll('|', '\\|')
  const out = [
    '# Error codes',
    '',
    '<!-- Generated from src/util/error-catalogue.ts by `npm run docs:errors`; do not edit by hand. -->',
    '',
    'Every error vis-runtime reports carries a stable, dotted code. Over HTTP it comes in the error',
    'envelope `{"error": {"code", "message", "details"}}` with the status below; in the library it is',
    "`VisError.code`; in a block's or a turn's result it is `error.code`. The message says what to do",
    'about the failure; `details` (HTTP) or `context` (library) names what it concerns.',
    '',
    '*Retry* says whether the same request can succeed when sent again later, unchanged. The status',
    "applies where the error is the answer to an HTTP request; a code that never is (a turn's failure,",
    "a tool's refusal inside a block) still has one, the status it would get.",
    '',
  ]
  for (const [prefix, rows] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    out.push(`## ${prefix}.*`, '', '| code | HTTP | retry | meaning |', '|---|---|---|---|')
    for (const [code, e] of rows)
      out.push(`| \`${code}\` | ${e.status} | ${e.retryable ? 'yes' : 'no'} | ${cell(e.summary)} |`)
    out.push('')
  }
  return out.join('\n')
}
