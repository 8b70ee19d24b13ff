import { execFile } from 'node:child_process'
import { type ErrorCode, VisError } from '../util/errors.js'

// Runs an external program (tar, strip, patchelf, apt-get...) and returns its
// stdout. A failure becomes a VisError carrying the program's stderr.
export function run(
  file: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; code?: ErrorCode; timeoutMs?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
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
  try {
    await run('sh', ['-c', 'command -v "$0"', name])
    return true
  } catch {
    return false
  }
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
