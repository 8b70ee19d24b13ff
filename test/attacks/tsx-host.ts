// Host processes the MCP launch attacks run (fixtures/*-host.ts): a TypeScript fixture started through
// tsx, in a folder outside every root, with its own environment. Asynchronous, so that a loopback server
// the test runs in this process (an npm registry) keeps answering while the host works.
import { spawn } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'

export type HostRun = { status: number | null; stdout: string; stderr: string }

// The fixture's exit status and output; killed after 240 s, so a hung host fails the test instead of
// outliving it.
export function runTsxHost(
  fixture: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<HostRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), fixture, ...args], {
      cwd,
      env: { ...process.env, ...env },
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), 240_000)
    child.on('close', (status) => {
      clearTimeout(timer)
      resolve({ status, stdout, stderr })
    })
  })
}

// A person's home H private to the host's process tree (a session may be rooted at it), with the
// default vis home ~/.vis inside it.
export const homeAt = (H: string): NodeJS.ProcessEnv => ({ HOME: H, VIS_HOME: join(H, '.vis') })

// The folders of an attack on a host whose HOME is a session root: H (<base>/home), the host's cwd
// outside every root, and there the marker a planted program writes when it runs on the host.
export function privateHomeLayout(base: string): { H: string; outside: string; marker: string } {
  const H = join(base, 'home')
  const outside = join(base, 'outside')
  mkdirSync(H)
  mkdirSync(outside)
  return { H, outside, marker: join(outside, 'ran-on-the-host') }
}
