// The frontmatter of SKILL.md files and agent definitions, as Claude Code and the other
// harnesses write it: a `---` fenced block of `key: value` lines before the markdown body.
// Only the YAML these files use is read (plain and quoted scalars, `|`/`>` blocks, inline and
// dash lists); anything else is a parse failure with a line number, never a guess.

import { ownValue, setOwn } from '../util/own-key.js'

export type FrontmatterValue = string | string[]
export type Frontmatter = Record<string, FrontmatterValue>

export type Parsed = { ok: true; data: Frontmatter; body: string } | { ok: false; reason: string }

const KEY_LINE = /^([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]+(.*))?$/

function unquote(raw: string, line: number): string | { error: string } {
  const v = raw.trim()
  if (v.startsWith('"')) {
    if (!v.endsWith('"') || v.length < 2) return { error: `line ${line}: unterminated "double-quoted" value` }
    try {
      return JSON.parse(v) as string
    } catch {
      return { error: `line ${line}: invalid escape in "double-quoted" value` }
    }
  }
  if (v.startsWith("'")) {
    if (!v.endsWith("'") || v.length < 2) return { error: `line ${line}: unterminated 'single-quoted' value` }
    return v.slice(1, -1).replaceAll("''", "'")
  }
  // A plain scalar ends at ` #` (a comment).
  const hash = v.search(/\s#/)
  return (hash >= 0 ? v.slice(0, hash) : v).trim()
}

function inlineList(raw: string, line: number): string[] | { error: string } {
  const inner = raw.trim()
  if (!inner.endsWith(']')) return { error: `line ${line}: a [list] must close on the same line` }
  const items = inner
    .slice(1, -1)
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
  const out: string[] = []
  for (const it of items) {
    const v = unquote(it, line)
    if (typeof v !== 'string') return v
    out.push(v)
  }
  return out
}

// Splits a markdown file into its frontmatter and body. Pure: no file access.
export function parseFrontmatter(text: string): Parsed {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/)
  if (lines[0]?.trim() !== '---')
    return { ok: false, reason: 'no frontmatter: the file must start with a `---` line' }
  const end = lines.findIndex((l, i) => i > 0 && l.trim() === '---')
  if (end < 0) return { ok: false, reason: 'the frontmatter is not closed: no second `---` line' }
  const data: Frontmatter = {}
  let i = 1
  const fail = (reason: string): Parsed => ({ ok: false, reason })
  while (i < end) {
    const line = lines[i]!
    const n = i + 1
    if (line.trim() === '' || line.trimStart().startsWith('#')) {
      i++
      continue
    }
    if (/^\s/.test(line)) return fail(`line ${n}: unexpected indentation (expected \`key: value\`)`)
    const m = KEY_LINE.exec(line)
    if (!m) return fail(`line ${n}: expected \`key: value\`, got ${JSON.stringify(line.slice(0, 60))}`)
    const key = m[1]!
    if (Object.hasOwn(data, key)) return fail(`line ${n}: \`${key}\` is given twice`)
    const raw = (m[2] ?? '').trim()
    i++
    // The lines indented under this key (continuations, list items, block text).
    const nested: string[] = []
    while (i < end && (lines[i]!.trim() === '' || /^\s/.test(lines[i]!) || lines[i]!.startsWith('- '))) {
      nested.push(lines[i]!)
      i++
    }
    while (nested.length > 0 && nested[nested.length - 1]!.trim() === '') nested.pop()
    if (raw === '|' || raw === '>' || raw === '|-' || raw === '>-') {
      const indent = Math.min(
        ...nested.filter((l) => l.trim() !== '').map((l) => l.length - l.trimStart().length),
      )
      const body = nested.map((l) => l.slice(Number.isFinite(indent) ? indent : 0))
      setOwn(
        data,
        key,
        raw.startsWith('|')
          ? body.join('\n')
          : body
              .map((l) => l.trim())
              .join(' ')
              .replace(/\s+/g, ' ')
              .trim(),
      )
      continue
    }
    if (raw === '' && nested.some((l) => l.trim() !== '')) {
      const items: string[] = []
      for (const l of nested) {
        if (l.trim() === '') continue
        const item = /^\s*-\s+(.*)$/.exec(l)
        if (!item) return fail(`line ${n}: \`${key}\` holds indented text that is not a \`- item\` list`)
        const v = unquote(item[1]!, n)
        if (typeof v !== 'string') return fail(v.error)
        items.push(v)
      }
      setOwn(data, key, items)
      continue
    }
    if (raw.startsWith('[')) {
      if (nested.length > 0) return fail(`line ${n}: a [list] must close on the same line`)
      const v = inlineList(raw, n)
      if (!Array.isArray(v)) return fail(v.error)
      setOwn(data, key, v)
      continue
    }
    if (raw.startsWith('"') || raw.startsWith("'")) {
      if (nested.length > 0) return fail(`line ${n}: a quoted value must close on its own line`)
      const v = unquote(raw, n)
      if (typeof v !== 'string') return fail(v.error)
      setOwn(data, key, v)
      continue
    }
    // A plain scalar may continue on indented lines (folded with spaces).
    const parts = [unquote(raw, n) as string, ...nested.map((l) => l.trim()).filter((l) => l !== '')]
    setOwn(data, key, parts.join(' ').trim())
  }
  return {
    ok: true,
    data,
    body: lines
      .slice(end + 1)
      .join('\n')
      .replace(/^\n+/, ''),
  }
}

// A field as one string: a list is joined with ", " (Claude Code writes `tools` either way).
export function field(data: Frontmatter, key: string): string | undefined {
  const v = ownValue(data, key)
  if (v === undefined) return undefined
  return Array.isArray(v) ? v.join(', ') : v
}

// A field as a list: `a, b` and `[a, b]` and dash lists all read the same.
export function listField(data: Frontmatter, key: string): string[] | undefined {
  const v = ownValue(data, key)
  if (v === undefined) return undefined
  const items = Array.isArray(v) ? v : v.split(',')
  return items.map((s) => s.trim()).filter((s) => s !== '')
}
