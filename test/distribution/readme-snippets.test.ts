// Issue 35 §6: the README's TypeScript snippets compile against the library as it is. Each ```ts
// block of README.md is type-checked (strict, as the package's users compile) with `vis-runtime`
// resolving to this checkout's src/index.ts, so a renamed export, a changed option or a changed
// result field that the README still shows fails here. A snippet that continues an earlier one
// (no import of its own) gets the entry points' import in front.
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import ts from 'typescript'
import { repoRoot, tempDir } from './helpers.js'

const ENTRY_IMPORT = "import { agentFor, createEngine, createRuntime } from 'vis-runtime'\n"

function snippets(): string[] {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8')
  return [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!)
}

function typeErrors(files: Record<string, string>): string[] {
  const dir = tempDir('vis-readme-ts-')
  mkdirSync(dir, { recursive: true })
  // The frameworks the adapters' snippets import resolve as in a project that installed them.
  symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'))
  const names = Object.entries(files).map(([name, text]) => {
    const path = join(dir, name)
    writeFileSync(path, text)
    return path
  })
  const program = ts.createProgram(names, {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ['node'],
    typeRoots: [join(repoRoot, 'node_modules', '@types')],
    paths: {
      'vis-runtime': [join(repoRoot, 'src', 'index.ts')],
      // The framework adapters' subpath exports (package.json exports, src/adapters).
      'vis-runtime/*': [join(repoRoot, 'src', 'adapters', '*.ts')],
    },
  })
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file !== undefined && names.includes(d.file.fileName))
    .map((d) => {
      const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0)
      return `${d.file!.fileName.slice(dir.length + 1)}:${line + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`
    })
}

const asModule = (code: string): string =>
  `${code.includes("from 'vis-runtime'") ? '' : ENTRY_IMPORT}${code}\nexport {}\n`

// One program for all (type-checking the library's sources is most of the cost): the README's
// snippets, and one that uses the library wrongly, which must fail, so the check is known to bite.
const WRONG = asModule(
  "import { createRuntime } from 'vis-runtime'\nconst rt = await createRuntime({ pool: 2 })\nawait rt.closeAll()\n",
)

test("every TypeScript snippet in the README compiles against the library's entry points", {
  timeout: 180_000,
}, () => {
  const blocks = snippets()
  // The quick start, the library section, the agent and the drafts examples at least.
  assert.ok(blocks.length >= 4, `${blocks.length} ts blocks`)
  assert.ok(blocks.some((b) => b.includes('createRuntime')) && blocks.some((b) => b.includes('createEngine')))
  for (const adapter of ['vis-runtime/ai-sdk', 'vis-runtime/openai-agents', 'vis-runtime/langchain'])
    assert.ok(
      blocks.some((b) => b.includes(`from '${adapter}'`)),
      `the README shows ${adapter}`,
    )
  const files = Object.fromEntries(blocks.map((b, i) => [`snippet-${i + 1}.mts`, asModule(b)]))
  const errors = typeErrors({ ...files, 'wrong.mts': WRONG })
  const wrong = errors.filter((e) => e.startsWith('wrong.mts:'))
  assert.equal(wrong.length, 2, wrong.join('\n'))
  assert.match(wrong[0]!, /size/)
  assert.match(wrong[1]!, /closeAll/)
  assert.deepEqual(
    errors.filter((e) => !e.startsWith('wrong.mts:')),
    [],
  )
})
