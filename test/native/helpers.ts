import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url))
// Absolute, so fixtures can run from any working directory.
export const tsxLoader = import.meta.resolve('tsx')
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url))

// Each test file gets its own VIS_HOME so nothing touches ~/.vis.
export function tempHome(): string {
  const home = mkdtempSync(join(tmpdir(), 'vis-native-'))
  process.env.VIS_HOME = home
  return home
}

export type RunResult = { code: number | null; signal: string | null; stdout: string; stderr: string }

// Runs a TypeScript fixture in its own process (one interpreter per process).
export function runTs(
  script: string,
  args: string[] = [],
  opts: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number; cwd?: string } = {},
): Promise<RunResult> {
  return run(process.execPath, ['--import', tsxLoader, script, ...args], opts)
}

export function run(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number; cwd?: string } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd ?? repoRoot,
      env: opts.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d) => {
      stdout += d
    })
    child.stderr.setEncoding('utf8').on('data', (d) => {
      stderr += d
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30000)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
    // A program that exits before reading its stdin (a syntax error) closes the pipe
    // first; that EPIPE is the program's business, not a test failure.
    child.stdin.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') reject(err)
    })
    child.stdin.end(opts.input ?? '')
  })
}

// Resolves when pred() holds, polling the event loop (never a timed assertion:
// the bound only stops a hung test).
export async function until(pred: () => boolean, what: string, limitMs = 10000): Promise<void> {
  const start = Date.now()
  while (!pred()) {
    if (Date.now() - start > limitMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 2))
  }
}
