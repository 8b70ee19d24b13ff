// MCP over stdio for bench/peers.js: the built `vis mcp` as a child process (as an MCP host starts
// it), driven by the official SDK's client, timing python_execution of `x = 1` on one session.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'

const VIS = fileURLToPath(new URL('../../bin/vis.js', import.meta.url))

// Environment for the server: no VIS_* settings of this shell leak in but the Python minor.
function serverEnv(home) {
  const env = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && (!k.startsWith('VIS_') || k === 'VIS_PYTHON_VERSION')) env[k] = v
  }
  return { ...env, VIS_HOME: home }
}

// The server process's own CPU so far (ms; its worker is a child and not counted): user + system
// ticks of /proc/<pid>/stat (fields 14 and 15, 1/100 s).
function serverCpuMs(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(f[11]) + Number(f[12])) * 10
}

// entry: the CLI script to run (an A/B run passes another build's).
export async function startMcpStdio({ python, nodeArgs = [], entry = VIS } = {}) {
  const home = mkdtempSync(join(tmpdir(), 'vis-bench-mcp-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-bench-mcp-root-'))
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...nodeArgs, entry, 'mcp', '--root', root, ...(python ? ['--python', python] : [])],
    env: serverEnv(home),
    stderr: 'pipe',
  })
  const client = new Client({ name: 'vis-bench-peers', version: '1.0.0' })
  await client.connect(transport, { timeout: 120_000 })
  const call = async () => {
    const r = await client.callTool({ name: 'python_execution', arguments: { code: 'x = 1' } }, undefined, {
      timeout: 120_000,
    })
    if (r.isError) throw new Error(`python_execution failed: ${JSON.stringify(r.content)}`)
  }
  await call() // the session exists from here on
  const us = []
  let cpuMs = 0
  return {
    pid: transport.pid,
    us,
    // The server's CPU per measured call, µs.
    cpuPerCallUs: () => (us.length > 0 ? (cpuMs * 1000) / us.length : Number.NaN),
    async warm(n) {
      for (let i = 0; i < n; i++) await call()
    },
    async round(batch) {
      const c0 = serverCpuMs(transport.pid)
      for (let i = 0; i < batch; i++) {
        const t0 = performance.now()
        await call()
        us.push((performance.now() - t0) * 1000)
      }
      cpuMs += serverCpuMs(transport.pid) - c0
    },
    async close() {
      await client.close()
      rmSync(home, { recursive: true, force: true })
      rmSync(root, { recursive: true, force: true })
    },
  }
}
