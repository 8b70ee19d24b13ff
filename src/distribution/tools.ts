import { execFile } from 'node:child_process'
import { isAbsolute } from 'node:path'
import { type ErrorCode, VisError } from '../util/errors.js'
import { hostProgramPath, trustedSearchPath } from '../util/host-programs.js'

// Runs an external program (tar, strip, patchelf, apt-get...) and returns its
// stdout. A failure becomes a VisError carrying the program's stderr.
export function run(
  file: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; code?: ErrorCode; timeoutMs?: number } = {},
): Promise<string> {
  // A program by name comes from the system directories, never the caller's PATH
  // (util/host-programs.ts); a staged interpreter is named by its absolute path.
  const program = isAbsolute(file) ? file : hostProgramPath(file)
  return new Promise((resolve, reject) => {
    if (!program) {
      reject(
        new VisError(
          opts.code ?? 'dist.tool',
          `${file} is not installed in the system directories (${trustedSearchPath().join(':')})`,
          {
            path: opts.cwd,
            command: [file, ...args].join(' '),
          },
        ),
      )
      return
    }
    execFile(
      program,
      args,
      { cwd: opts.cwd, env: opts.env, maxBuffer: 64 * 1024 * 1024, timeout: opts.timeoutMs ?? 0 },
      (err, stdout, stderr) => {
        if (!err) return resolve(stdout)
        const missing = (err as NodeJS.ErrnoException).code === 'ENOENT'
        const why = missing ? `${file} is not installed` : `${file} failed: ${stderr.trim() || err.message}`
        reject(
          new VisError(opts.code ?? 'dist.tool', why, { path: opts.cwd, command: [file, ...args].join(' ') }),
        )
      },
    )
  })
}

export async function hasProgram(name: string): Promise<boolean> {
  return hostProgramPath(name) !== undefined
}

// The environment for running a staged interpreter: no loader or Python
// variables from the caller, so the tree proves it stands on its own.
export function cleanPythonEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('PYTHON') || k.startsWith('LD_') || k.startsWith('PYENV')) continue
    env[k] = v
  }
  return env
}

/**
 * Byte-compile a staged tree's stdlib with the Python that will run it. Unchecked-hash .pyc files
 * stay valid after the tree is copied or unpacked elsewhere (timestamps are not consulted). -I -S:
 * no environment and no site import, so nothing in a site-packages (a sitecustomize, a .pth) runs
 * on the host while the tree is compiled; compileall needs only the stdlib (fourteenth outsider pass).
 */
export async function compileStdlib(python: string, stdlib: string): Promise<void> {
  await run(
    python,
    [
      '-I',
      '-S',
      '-m',
      'compileall',
      '-q',
      '-j',
      '0',
      '-o',
      '0',
      '--invalidation-mode',
      'unchecked-hash',
      stdlib,
    ],
    { env: cleanPythonEnv(), code: 'dist.stage' },
  )
}
