import { spawn } from 'node:child_process'
import { extname } from 'node:path'
import { VisError } from '../../util/errors.js'
import { findHostPython } from './python.js'

export type SyntaxKind = 'json' | 'script' | 'python'

const SCRIPT_EXT = new Set(['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'])

export function syntaxKind(path: string): SyntaxKind | undefined {
  const ext = extname(path).toLowerCase()
  if (ext === '.json') return 'json'
  if (ext === '.py' || ext === '.pyi') return 'python'
  if (SCRIPT_EXT.has(ext)) return 'script'
  return undefined
}

// Returns the first parse error of a text, or undefined when it parses.
export async function parseError(path: string, text: string): Promise<string | undefined> {
  const kind = syntaxKind(path)
  if (kind === 'json') {
    try {
      JSON.parse(text)
      return undefined
    } catch (err) {
      return (err as Error).message
    }
  }
  if (kind === 'script') return scriptError(path, text)
  if (kind === 'python') return pythonError(path, text)
  return undefined
}

async function scriptError(path: string, text: string): Promise<string | undefined> {
  const ts = (await import('typescript')).default
  // transpileModule reports syntactic diagnostics only, which is what we want.
  const out = ts.transpileModule(text, {
    fileName: path,
    reportDiagnostics: true,
    compilerOptions: { allowJs: true, jsx: ts.JsxEmit.Preserve, noEmit: false },
  })
  const d = out.diagnostics?.find((x) => x.category === ts.DiagnosticCategory.Error && x.file)
  if (!d) return undefined
  const pos = d.file!.getLineAndCharacterOfPosition(d.start ?? 0)
  return `line ${pos.line + 1}, column ${pos.character + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`
}

// A fixed checker program; the file's text arrives on stdin, never in source.
const PY_CHECK = [
  'import sys',
  'try:',
  "    compile(sys.stdin.buffer.read(), sys.argv[1], 'exec', dont_inherit=True)",
  'except (SyntaxError, ValueError) as e:',
  '    print(f\'line {getattr(e, "lineno", None)}, column {getattr(e, "offset", None)}: {getattr(e, "msg", e)}\')',
  '    sys.exit(3)',
].join('\n')

async function pythonError(path: string, text: string): Promise<string | undefined> {
  const python = await findHostPython()
  if (!python) {
    throw new VisError(
      'tool.no-python',
      'no Python interpreter is available to check the syntax of a .py file',
      {
        path,
      },
    )
  }
  return new Promise((resolve, reject) => {
    const child = spawn(python, ['-I', '-S', '-c', PY_CHECK, path], { stdio: ['pipe', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d
    })
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      err += d
    })
    child.on('error', reject)
    child.on('close', (code) => {
      if (code === 0) resolve(undefined)
      else if (code === 3) resolve(out.trim())
      else
        reject(
          new VisError('tool.io', `python syntax check failed to run: ${err.trim() || `exit ${code}`}`, {
            path,
          }),
        )
    })
    child.stdin.on('error', () => {})
    child.stdin.end(text)
  })
}
