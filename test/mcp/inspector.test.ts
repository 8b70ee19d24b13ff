// The MCP Inspector's CLI mode (@modelcontextprotocol/inspector-cli, a devDependency) against
// `vis mcp` over stdio: a third-party client that lists vis's tools and calls one.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { test } from 'node:test'
import { childEnv, cliScript, repoRoot, tempDir } from './helpers.js'

const inspectorCli = join(
  createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/package.json'),
  '..',
  'build',
  'cli.js',
)

function inspector(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const home = tempDir('inspector-home')
  const root = tempDir('inspector-root')
  const child = spawn(
    process.execPath,
    [
      inspectorCli,
      '--cli',
      '-e',
      `VIS_HOME=${home}`,
      process.execPath,
      '--import',
      'tsx',
      cliScript,
      'mcp',
      '--root',
      root,
      '--pool',
      '0',
      ...args,
    ],
    { cwd: repoRoot, env: childEnv({}), stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => {
    stdout += d
  })
  child.stderr.on('data', (d) => {
    stderr += d
  })
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })))
}

test('the MCP Inspector CLI lists vis tools and runs a block', async () => {
  const list = await inspector(['--method', 'tools/list'])
  assert.equal(list.status, 0, list.stderr)
  const names = (JSON.parse(list.stdout) as { tools: { name: string }[] }).tools.map((t) => t.name)
  assert.deepEqual(names, [
    'python_execution',
    'python_interrupt',
    'session_reset',
    'cat',
    'ls',
    'grep',
    'patch',
  ])
  const call = await inspector([
    '--method',
    'tools/call',
    '--tool-name',
    'python_execution',
    '--tool-arg',
    'code=print(6 * 7)',
  ])
  assert.equal(call.status, 0, call.stderr)
  const result = JSON.parse(call.stdout) as { content: { type: string; text: string }[]; isError: boolean }
  assert.deepEqual(result.content, [{ type: 'text', text: '42' }])
  assert.equal(result.isError, false)
})
