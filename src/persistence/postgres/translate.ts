// The one mechanical difference left between the repositories' SQL and PostgreSQL's: SQLite's
// positional `?` becomes `$1, $2, ...`. Everything else the repositories write is portable SQL
// (the few SQLite-only forms were rewritten at their source, see docs/ARCHITECTURE.md, "Storage
// backends"), so this stays a tokenizer for placeholders, not a dialect converter.
// A `?` inside a string literal, a quoted identifier or a comment is text, not a placeholder.
export function toPostgresPlaceholders(sql: string): string {
  let out = ''
  let n = 0
  let i = 0
  while (i < sql.length) {
    const c = sql[i]!
    if (c === "'" || c === '"') {
      // '' (or "") inside a quoted run is an escaped quote: the scan simply re-enters the run.
      const end = sql.indexOf(c, i + 1)
      const stop = end === -1 ? sql.length : end + 1
      out += sql.slice(i, stop)
      i = stop
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i)
      const stop = end === -1 ? sql.length : end
      out += sql.slice(i, stop)
      i = stop
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2)
      const stop = end === -1 ? sql.length : end + 2
      out += sql.slice(i, stop)
      i = stop
    } else if (c === '?') {
      out += `$${++n}`
      i++
    } else {
      out += c
      i++
    }
  }
  return out
}
