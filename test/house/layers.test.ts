// The layering docs/ARCHITECTURE.md draws, read from the imports themselves: a folder imports
// only folders on its row or below, the engine and everything above it reach a session's worker
// through src/sessions (never src/worker or src/protocol), and the few crossings the document
// lists are the only exceptions. A new import across the layers fails here, naming the file.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const src = fileURLToPath(new URL('../../src/', import.meta.url))

// Rows of the drawing, bottom (0) to top. A folder not listed fails the test: place it first.
const ROWS: Record<string, number> = {
  util: 0,
  distribution: 0,
  persistence: 0,
  guest: 0,
  format: 0,
  // The policy contract (zod schemas) the wire and the confinement layer both import.
  contracts: 0,
  confinement: 1,
  native: 1,
  worker: 2,
  protocol: 2,
  sessions: 3,
  tools: 3,
  engine: 4,
  drafts: 4,
  extensions: 4,
  project: 4,
  'mcp-client': 4,
  skills: 4,
  agent: 5,
  mcp: 5,
  cluster: 5,
  http: 6,
  cli: 6,
  bench: 6,
  bundle: 6,
  // The framework adapters (vis-runtime/ai-sdk, /openai-agents, /langchain): a surface over the engine.
  adapters: 6,
  'index.ts': 6,
}

// Folders that hold a session's worker: only the sessions layer, and the outer surfaces that
// drive a bare worker for measuring (bench, and `vis bench` in cli), import them from above.
const BENEATH_SESSIONS = new Set(['worker', 'protocol'])
const THROUGH_SESSIONS = new Set([
  'engine',
  'drafts',
  'extensions',
  'project',
  'mcp-client',
  'skills',
  'agent',
  'mcp',
  'cluster',
  'http',
])

// The crossings docs/ARCHITECTURE.md lists, each with why it stays.
const KNOWN_CROSSINGS: Record<string, string> = {
  // The file tools read through a draft's view; drafts use the file walkers.
  'tools -> drafts': 'the file tools read through a draft view',
  // The trusted extension worker is no session: the registry spawns it itself.
  'extensions -> worker': 'the trusted extension worker is not a session',
}

// Single files allowed one crossing, each with why: the file stays where its users import it.
const KNOWN_FILE_CROSSINGS: Record<string, string> = {
  'sessions/create-runtime.ts -> engine':
    "createRuntime is the engine's transient-session facade; the pinned path's module re-exports it",
}

export type Edge = { from: string; to: string; file: string; spec: string }

// The folder a source file belongs to (its first path segment under src/, or index.ts).
export function folderOf(file: string): string {
  return relative(src, file).split('/')[0] ?? ''
}

// Every relative import of one file: static imports and re-exports, `import type` too (a type
// import still ties the layers' contracts), and dynamic import().
export function importsOf(file: string, text: string): Edge[] {
  const info = ts.preProcessFile(text, true, true)
  return info.importedFiles
    .map((f) => f.fileName)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => ({
      from: folderOf(file),
      to: folderOf(resolve(dirname(file), spec)),
      file: relative(src, file),
      spec,
    }))
}

// Why one import breaks the layering, or undefined when it keeps it.
export function violation(e: Edge): string | undefined {
  if (e.from === e.to) return undefined
  const key = `${e.from} -> ${e.to}`
  if (KNOWN_CROSSINGS[key] || KNOWN_FILE_CROSSINGS[`${e.file} -> ${e.to}`]) return undefined
  const from = ROWS[e.from]
  const to = ROWS[e.to]
  if (from === undefined || to === undefined) {
    return `${e.file}: src/${from === undefined ? e.from : e.to} has no row in the layering; add it to ROWS and to docs/ARCHITECTURE.md's drawing`
  }
  if (THROUGH_SESSIONS.has(e.from) && BENEATH_SESSIONS.has(e.to)) {
    return `${e.file} imports ${e.spec}: src/${e.from} reaches past src/sessions into src/${e.to}; take it from src/sessions`
  }
  if (to > from) {
    return `${e.file} imports ${e.spec}: src/${e.from} (row ${from}) may not import src/${e.to} (row ${to}), which is above it`
  }
  return undefined
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name)
    if (d.isDirectory()) return sourceFiles(p)
    return d.name.endsWith('.ts') ? [p] : []
  })
}

describe('layering', () => {
  test('every import under src/ keeps the layering docs/ARCHITECTURE.md draws', () => {
    const files = sourceFiles(src)
    assert.ok(files.length > 300, `only ${files.length} source files found under ${src}`)
    const edges = files.flatMap((f) => importsOf(f, readFileSync(f, 'utf8')))
    assert.ok(
      edges.some((e) => e.from === 'engine' && e.to === 'sessions'),
      'no engine → sessions import was read',
    )
    const broken = edges.map(violation).filter((v): v is string => v !== undefined)
    assert.deepEqual(broken, [])
  })

  test('the wire schemas take the policy contract from src/contracts, never from the confinement layer', () => {
    const edges = sourceFiles(join(src, 'protocol')).flatMap((f) => importsOf(f, readFileSync(f, 'utf8')))
    assert.ok(
      edges.some((e) => e.to === 'contracts'),
      'src/protocol imports nothing from src/contracts',
    )
    assert.deepEqual(
      edges.filter((e) => e.to === 'confinement').map((e) => `${e.file} imports ${e.spec}`),
      [],
    )
    // The contract stands on its own: only util (the IP reading its entry grammar uses) is below it.
    const contract = sourceFiles(join(src, 'contracts')).flatMap((f) => importsOf(f, readFileSync(f, 'utf8')))
    assert.deepEqual(
      contract
        .filter((e) => e.to !== 'contracts' && e.to !== 'util')
        .map((e) => `${e.file} imports ${e.spec}`),
      [],
    )
  })

  test('an engine module importing the worker is refused, naming the file and the way through', () => {
    const file = join(src, 'engine', 'roots.ts')
    const edges = importsOf(
      file,
      "import { normalizePolicy } from '../worker/worker-policy.js'\nimport type { Session } from '../sessions/session.js'\nconst m = await import('../protocol/framing.js')\n",
    )
    assert.deepEqual(
      edges.map((e) => e.to),
      ['worker', 'sessions', 'protocol'],
    )
    assert.match(
      violation(edges[0] as Edge) ?? '',
      /engine\/roots\.ts imports \.\.\/worker\/worker-policy\.js: src\/engine reaches past src\/sessions/,
    )
    assert.equal(violation(edges[1] as Edge), undefined)
    assert.match(violation(edges[2] as Edge) ?? '', /reaches past src\/sessions into src\/protocol/)
  })

  test('an import from a row above is refused; one from below is kept', () => {
    const up = importsOf(
      join(src, 'native', 'x.ts'),
      "import { a } from '../protocol/framing.js'\n",
    )[0] as Edge
    assert.match(violation(up) ?? '', /src\/native \(row 1\) may not import src\/protocol \(row 2\)/)
    const down = importsOf(
      join(src, 'worker', 'x.ts'),
      "export { a } from '../native/wire-spin.js'\n",
    )[0] as Edge
    assert.equal(violation(down), undefined)
  })

  test("only the pinned createRuntime module may re-export the engine's facade from src/sessions", () => {
    const spec = "export { createRuntime } from '../engine/create-runtime.js'\n"
    const pinned = importsOf(join(src, 'sessions', 'create-runtime.ts'), spec)[0] as Edge
    assert.equal(violation(pinned), undefined)
    const other = importsOf(join(src, 'sessions', 'session.ts'), spec)[0] as Edge
    assert.match(violation(other) ?? '', /src\/sessions \(row 3\) may not import src\/engine \(row 4\)/)
  })

  test('a listed crossing is kept, the same import from elsewhere is not', () => {
    const trusted = importsOf(
      join(src, 'extensions', 'x.ts'),
      "import { Worker } from '../worker/worker.js'\n",
    )
    assert.equal(violation(trusted[0] as Edge), undefined)
    const agent = importsOf(join(src, 'agent', 'x.ts'), "import { Worker } from '../worker/worker.js'\n")
    assert.match(violation(agent[0] as Edge) ?? '', /src\/agent reaches past src\/sessions into src\/worker/)
  })
})
