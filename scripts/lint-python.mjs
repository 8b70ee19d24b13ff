#!/usr/bin/env node
// Lints and format-checks every Python file in the tree with ruff's WASM build
// (@astral-sh/ruff-wasm-nodejs), configured by ruff.toml. There is no PyPI here, so no
// ruff binary; the WASM build runs the same rules and formatter, one file at a time.
//   node scripts/lint-python.mjs          report `path:line:col CODE message` and files whose
//                                         formatting differs; exit 1 if there is any
//   node scripts/lint-python.mjs --write  sort imports (ruff's I001 fix) and format in place,
//                                         then report what is left
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { repoRoot, sourceFiles } from './lint-files.mjs'

const require = createRequire(import.meta.url)
const ruff = require('@astral-sh/ruff-wasm-nodejs')

// ruff.toml in the subset it uses: [table] headers, `key = value` where the value is a
// string, number, boolean or (possibly multi-line) array of them. Anything else is an
// error rather than a setting silently dropped.
function readRuffToml(path) {
  const settings = {}
  let table = settings
  let pending = ''
  const lines = readFileSync(path, 'utf8').split('\n')
  lines.forEach((raw, i) => {
    const line = (pending ? `${pending} ` : '') + stripComment(raw).trim()
    pending = ''
    if (!line) return
    const header = /^\[([A-Za-z0-9_.-]+)\]$/.exec(line)
    if (header) {
      table = settings
      for (const key of header[1].split('.')) table = table[key] ??= {}
      return
    }
    const pair = /^([A-Za-z0-9_-]+)\s*=\s*(.+)$/.exec(line)
    if (!pair) throw new Error(`${path}:${i + 1}: cannot read this line: ${raw}`)
    const opens = (pair[2].match(/\[/g) ?? []).length
    const closes = (pair[2].match(/\]/g) ?? []).length
    if (opens > closes) {
      pending = line
      return
    }
    try {
      table[pair[1]] = JSON.parse(pair[2].replace(/,\s*\]/g, ']'))
    } catch {
      throw new Error(
        `${path}:${i + 1}: the value of ${pair[1]} is not a plain string, number, boolean or array`,
      )
    }
  })
  if (pending) throw new Error(`${path}: an array is never closed`)
  return settings
}

function stripComment(line) {
  let quoted = false
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '"' && line[i - 1] !== '\\') quoted = !quoted
    else if (line[i] === '#' && !quoted) return line.slice(0, i)
  }
  return line
}

// Applies a diagnostic's fix edits (1-based row and UTF-16 column, as the workspace was
// asked for) from last to first, so earlier offsets stay valid.
function applyFix(source, fix) {
  const starts = [0]
  for (let i = 0; i < source.length; i++) if (source[i] === '\n') starts.push(i + 1)
  const offset = (loc) => starts[loc.row - 1] + loc.column - 1
  const edits = [...fix.edits].sort((a, b) => offset(b.location) - offset(a.location))
  for (const e of edits) {
    source = source.slice(0, offset(e.location)) + (e.content ?? '') + source.slice(offset(e.end_location))
  }
  return source
}

const write = process.argv.includes('--write')
const workspace = new ruff.Workspace(readRuffToml(join(repoRoot, 'ruff.toml')), ruff.PositionEncoding.Utf16)
let problems = 0
const files = sourceFiles(['.py'])
for (const file of files) {
  const abs = join(repoRoot, file)
  const original = readFileSync(abs, 'utf8')
  let source = original
  if (write) {
    // One import block fixed per pass; a file has few, and each pass re-checks.
    for (let pass = 0; pass < 20; pass++) {
      const unsorted = workspace.check(source).find((d) => d.code === 'I001' && d.fix)
      if (!unsorted) break
      source = applyFix(source, unsorted.fix)
    }
    source = workspace.format(source)
    if (source !== original) writeFileSync(abs, source)
  }
  for (const d of workspace.check(source)) {
    problems++
    console.log(
      `${file}:${d.start_location.row}:${d.start_location.column} ${d.code ?? 'syntax'} ${d.message}`,
    )
  }
  if (workspace.format(source) !== source) {
    problems++
    console.log(`${file}: not formatted as ruff formats it (npm run format rewrites it)`)
  }
}
if (problems) {
  console.log(`ruff ${ruff.Workspace.version()}: ${problems} problem(s) in ${files.length} Python files`)
  process.exit(1)
}
