import type { ChildProcess } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../helpers/nginx.js'
import { python, spawnServe } from '../http/helpers.js'

// Real `vis serve` nodes from source, one process each, sharing a PostgreSQL database.

export const TOKEN = 'cluster-test-token-0123456789abcdef'
export const auth = { authorization: `Bearer ${TOKEN}` }

export type VisNode = {
  id: string
  port: number
  url: string
  home: string
  child: ChildProcess
  out(): string
  err(): string
  // SIGKILL, and resolves once the process is gone.
  kill(): Promise<void>
  // A clean stop (SIGTERM).
  stop(): Promise<void>
}

export type NodeSpec = {
  id: string
  databaseUrl: string
  leaseMs: number
  // The name clients reach the cluster by (nginx passes their Host on).
  allowHost?: string
  port?: number
  home?: string
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once('exit', () => resolve())
  })

export async function startNode(spec: NodeSpec): Promise<VisNode> {
  const port = spec.port ?? (await freePort())
  const home = spec.home ?? mkdtempSync(join(tmpdir(), `vis-cluster-${spec.id}-`))
  const url = `http://127.0.0.1:${port}`
  const args = ['--port', String(port), '--pool', '1', '--node-id', spec.id, '--advertise', url]
  args.push('--lease-ms', String(spec.leaseMs))
  if (spec.allowHost) args.push('--allow-host', spec.allowHost)
  if (python) args.push('--python', python)
  // spawnServe passes `--port 0` first; ours comes later and wins (the advertised URL needs it).
  const { child, out, err } = await spawnServe(args, {
    ...process.env,
    VIS_HOME: home,
    VIS_TOKEN: TOKEN,
    VIS_DATABASE_URL: spec.databaseUrl,
    ...(python ? { VIS_PYTHON_VERSION: python } : {}),
  })
  if (child.exitCode !== null) throw new Error(`node ${spec.id} exited (${child.exitCode}): ${err()}`)
  return {
    id: spec.id,
    port,
    url,
    home,
    child,
    out,
    err,
    async kill() {
      child.kill('SIGKILL')
      await exited(child)
    },
    async stop() {
      child.kill('SIGTERM')
      await exited(child)
    },
  }
}

// Stops whatever is still running (after a test).
export async function stopAll(nodes: (VisNode | undefined)[]): Promise<void> {
  await Promise.all(
    nodes.map((n) => (n && n.child.exitCode === null && n.child.signalCode === null ? n.kill() : undefined)),
  )
}
