import { spawn } from 'node:child_process'
import { extname } from 'node:path'
import { VisError } from '../../util/errors.js'
import { hostProgramPath } from '../../util/host-programs.js'
import { importOptional } from '../../util/optional-module.js'
import { Slots } from './check-slots.js'
import { findHostPython } from './python.js'

export type SyntaxKind = 'json' | 'script' | 'python'

// The text checked is the sandbox's and the checks run on the host: the
// TypeScript parser on the host's event loop, CPython's compiler in a host
// process outside every jail (about 360 bytes of memory per byte of a list
// display). Larger files are not checked, and the result says so.
export const SYNTAX_CHECK_MAX_BYTES = 256 * 1024
// TypeScript's parser runs on the host's event loop (about 0.1 s per 128 KiB
// unloaded, twice per file): its files get a lower cap, and the loop gets a
// turn before each parse so a patch of many files cannot hold it throughout.
export const SCRIPT_CHECK_MAX_BYTES = 128 * 1024
// The Python checker's address space and time; a file under the size cap
// compiles in well under both.
export const PY_CHECK_MAX_AS_BYTES = 256 * 1024 * 1024
export const PY_CHECK_TIMEOUT_MS = 10_000
// The RLIMIT_AS above bounds one checker; this bounds them all: one Python checker at a time on
// the whole host (every session, every concurrent patch), so the host never holds more than
// PY_CHECK_MAX_AS_BYTES for them. A check costs tens of milliseconds; one that waits longer
// than the wait bound, or finds the queue full, is skipped and the result says so.
export const PY_CHECKERS_AT_ONCE = 1
export const PY_CHECK_MAX_WAITING = 64
export const PY_CHECK_MAX_WAIT_MS = 30_000
const pyCheckers = new Slots(PY_CHECKERS_AT_ONCE, PY_CHECK_MAX_WAITING, PY_CHECK_MAX_WAIT_MS)

// `error` is the first parse error; `unchecked` says why no check ran.
export type SyntaxResult = { error?: string; unchecked?: string }

const SCRIPT_EXT = new Set(['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'])

export function syntaxKind(path: string): SyntaxKind | undefined {
  const ext = extname(path).toLowerCase()
  if (ext === '.json') return 'json'
  if (ext === '.py' || ext === '.pyi') return 'python'
  if (SCRIPT_EXT.has(ext)) return 'script'
  return undefined
}

export async function checkSyntax(path: string, text: string): Promise<SyntaxResult> {
  const kind = syntaxKind(path)
  if (kind === undefined) return {}
  const bytes = Buffer.byteLength(text)
  const cap = kind === 'script' ? SCRIPT_CHECK_MAX_BYTES : SYNTAX_CHECK_MAX_BYTES
  if (bytes > cap)
    return { unchecked: `the file is ${bytes} bytes, over the ${cap}-byte limit for syntax checks` }
  if (kind === 'json') {
    try {
      JSON.parse(text)
      return {}
    } catch (err) {
      return { error: (err as Error).message }
    }
  }
  if (kind === 'script') {
    await new Promise((resolve) => setImmediate(resolve))
    const ts = await importOptional<{ default: typeof import('typescript') }>('typescript')
    if (ts.absent !== undefined) return { unchecked: `the host has no TypeScript parser: ${ts.absent}` }
    return { error: scriptError(ts.module.default, path, text) }
  }
  return pyCheckers.run(
    () => pythonCheck(path, text),
    (why): SyntaxResult => ({
      unchecked:
        why === 'full'
          ? `the host's Python syntax checker is busy: ${PY_CHECK_MAX_WAITING} checks are already waiting`
          : `the host's Python syntax checker was busy for ${PY_CHECK_MAX_WAIT_MS} ms`,
    }),
  )
}

function scriptError(ts: typeof import('typescript'), path: string, text: string): string | undefined {
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

// util-linux's prlimit sets RLIMIT_AS on the checker before it execs Python
// (Node's spawn has no rlimit option).
function findPrlimit(): string | undefined {
  return hostProgramPath('prlimit')
}

// A fixed checker program; the file's text arrives on stdin, never in source.
const PY_CHECK = [
  'import sys',
  'try:',
  "    compile(sys.stdin.buffer.read(), sys.argv[1], 'exec', dont_inherit=True)",
  'except (SyntaxError, ValueError) as e:',
  '    print(f\'line {getattr(e, "lineno", None)}, column {getattr(e, "offset", None)}: {getattr(e, "msg", e)}\')',
  '    sys.exit(3)',
  'except MemoryError:',
  '    sys.exit(4)',
].join('\n')

async function pythonCheck(path: string, text: string): Promise<SyntaxResult> {
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
  const prlimit = findPrlimit()
  if (!prlimit)
    return { unchecked: 'prlimit (util-linux) is not installed to bound the Python syntax checker' }
  const args = [
    `--as=${PY_CHECK_MAX_AS_BYTES}`,
    `--cpu=${Math.ceil(PY_CHECK_TIMEOUT_MS / 1000)}`,
    '--core=0',
    '--',
    python,
    '-I',
    '-S',
    '-c',
    PY_CHECK,
    path,
  ]
  return new Promise((resolve, reject) => {
    const child = spawn(prlimit, args, { stdio: ['pipe', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, PY_CHECK_TIMEOUT_MS)
    // The checker prints one line; a bound keeps a runaway from filling the host.
    const keep = (acc: string, d: string) => (acc.length < 4096 ? acc + d : acc)
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out = keep(out, d)
    })
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      err = keep(err, d)
    })
    child.on('error', (e) => {
      clearTimeout(timer)
      reject(e)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      if (code === 0) resolve({})
      else if (code === 3) resolve({ error: out.trim().slice(0, 1000) })
      else if (timedOut || signal === 'SIGXCPU' || signal === 'SIGKILL')
        resolve({ unchecked: `the Python syntax checker ran past its ${PY_CHECK_TIMEOUT_MS} ms bound` })
      else if (code === 4 || /MemoryError/.test(err))
        resolve({
          unchecked: `the Python syntax checker ran out of its ${PY_CHECK_MAX_AS_BYTES >> 20} MiB memory bound`,
        })
      else
        reject(
          new VisError(
            'tool.io',
            `python syntax check failed to run: ${err.trim().slice(0, 500) || `exit ${code}`}`,
            {
              path,
            },
          ),
        )
    })
    child.stdin.on('error', () => {})
    child.stdin.end(text)
  })
}
